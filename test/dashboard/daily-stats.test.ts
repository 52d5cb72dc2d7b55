// The daily roll-ups (migrations/0005, 0018) against an oracle computed here, in JavaScript with BigInt, from the
// raw rows: through demo data, settlement (PENDING → COMPLETED counted once), deletes, big amounts, and the
// backfill of records stored before the migration.
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { completePayment, failPayment, type PaymentRef } from "../../src/core/ledger/ledger.ts";
import { NETWORK_IDS } from "../../src/core/money/networks.ts";
import { daysInToken, sumsPerToken, sumsSince } from "../../src/core/money/tokens.ts";
import { getDb } from "../../src/db/client.ts";
import { findCacheTotals, findDailyRevenue, findDailyTraffic, type StatsScope, statsScope } from "../../src/db/daily-stats.ts";
import { type Tenant, type Token, tenants as tenantsTable } from "../../src/db/schema.ts";
import { lastUtcDays } from "../../src/lib/utc-days.ts";
import { createPaywallFor } from "../history/support.ts";
import { createTenant, db } from "../support/factories.ts";
import { forceStatusStatement } from "../support/ledger-fixture.ts";
import { address, completeRecorded, failRecorded, recordPayment, txHash } from "../support/payments.ts";

interface RawRecord {
  tenant_id: string;
  paywall_id: string;
  service_id: string | null;
  created_at: number;
  status?: string;
  amount?: string;
  network?: string;
  event_type?: string;
}

/**
 * What the roll-ups hold: traffic by `scope day` (daily_stats), completed revenue by `scope day network`
 * (daily_revenue); zero rows left out.
 */
interface Totals {
  traffic: Record<string, { requests: number; successes: number; errors: number }>;
  revenue: Record<string, bigint>;
}

const scopesOf = (r: RawRecord) => ["tenant", `paywall:${r.paywall_id}`, ...(r.service_id ? [`service:${r.service_id}`] : [])];
const dayOf = (r: RawRecord) => new Date(r.created_at).toISOString().slice(0, 10);

/** What the roll-ups must hold for `tenantId`: computed from every raw row, without the triggers' SQL. */
async function oracle(d1: D1Database, tenantId: string): Promise<Totals> {
  const read = async (sql: string) => (await d1.prepare(sql).bind(tenantId).all<RawRecord>()).results;
  const transactions = await read(
    "SELECT tenant_id, paywall_id, service_id, created_at, status, amount, network FROM transactions WHERE tenant_id = ?",
  );
  const events = await read("SELECT tenant_id, paywall_id, service_id, created_at, event_type FROM events WHERE tenant_id = ?");
  const totals: Totals = { traffic: {}, revenue: {} };
  for (const t of transactions) {
    if (t.status !== "COMPLETED") continue;
    for (const scope of scopesOf(t)) {
      const key = `${scope} ${dayOf(t)} ${t.network}`;
      totals.revenue[key] = (totals.revenue[key] ?? 0n) + BigInt(t.amount as string);
    }
  }
  for (const e of events) {
    for (const scope of scopesOf(e)) {
      const key = `${scope} ${dayOf(e)}`;
      totals.traffic[key] ??= { requests: 0, successes: 0, errors: 0 };
      const t = totals.traffic[key];
      t.requests += Number(e.event_type === "REQUEST");
      t.successes += Number(e.event_type === "SUCCESS");
      t.errors += Number(e.event_type === "ERROR");
    }
  }
  for (const [key, amount] of Object.entries(totals.revenue)) if (amount === 0n) delete totals.revenue[key];
  return totals;
}

/** The kept rows of `tenantId`, zero rows left out (a row may fall back to zero after a delete). */
async function kept(d1: D1Database, tenantId: string): Promise<Totals> {
  const traffic = await d1
    .prepare("SELECT scope, day, requests, successes, errors FROM daily_stats WHERE tenant_id = ?")
    .bind(tenantId)
    .all<{ scope: string; day: string; requests: number; successes: number; errors: number }>();
  const revenue = await d1
    .prepare("SELECT scope, day, network, CAST(amount AS TEXT) AS amount FROM daily_revenue WHERE tenant_id = ?")
    .bind(tenantId)
    .all<{ scope: string; day: string; network: string; amount: string }>();
  return {
    traffic: Object.fromEntries(
      traffic.results
        .filter((r) => r.requests || r.successes || r.errors)
        .map((r) => [`${r.scope} ${r.day}`, { requests: r.requests, successes: r.successes, errors: r.errors }]),
    ),
    revenue: Object.fromEntries(
      revenue.results.filter((r) => r.amount !== "0").map((r) => [`${r.scope} ${r.day} ${r.network}`, BigInt(r.amount)]),
    ),
  };
}

/** The tenant's PENDING payments, as the ledger's moves take them. */
const pendingPayments = async (tenantId: string): Promise<PaymentRef[]> =>
  (
    await env.DB.prepare(
      `SELECT id AS transactionId, tenant_id AS tenantId, paywall_id AS paywallId, service_id AS serviceId, protocol, network, amount
       FROM transactions WHERE tenant_id = ? AND status = 'PENDING' ORDER BY id`,
    )
      .bind(tenantId)
      .all<PaymentRef>()
  ).results;

/** The days' traffic with their revenue in `token` (what the earnings chart draws): the two roll-up reads, joined. */
async function daily(tenantId: string, days: string[], scope: StatsScope, token: Token) {
  const [traffic, revenue] = await Promise.all([
    findDailyTraffic(db(), tenantId, days, scope),
    findDailyRevenue(db(), tenantId, days, scope, NETWORK_IDS),
  ]);
  return daysInToken(traffic, revenue, token);
}

/** Each network's revenue since each date of `since` (the earnings totals): one read of the days, summed per window. */
async function networkTotals(tenantId: string, scope: StatsScope, since: string[], networks: readonly string[] = NETWORK_IDS) {
  const days = lastUtcDays(new Date(), 90);
  return sumsSince(await findDailyRevenue(db(), tenantId, days, scope, networks), since);
}

describe("daily roll-ups", () => {
  // Demo data writes a few thousand rows through the roll-up triggers: seconds on a loaded machine.
  it("agree with the raw rows through demo data, settlements (once, retries included) and deletes", {
    timeout: 30_000,
  }, async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    await writeDemoData(db(), tenant, 300);
    await writeDemoData(db(), other, 50);
    // A second service without paywalls in the demo: a paywall of another service, so service scopes differ.
    const extra = await createPaywallFor(tenant);
    await recordPayment(extra, { network: "base-sepolia", amount: "1234567", status: "COMPLETED" });
    expect(await kept(env.DB, tenant.id)).toEqual(await oracle(env.DB, tenant.id));

    const pending = await pendingPayments(tenant.id);
    expect(pending.length).toBeGreaterThan(3);
    const [toFail, ...toComplete] = pending;
    for (const ref of toComplete) {
      expect(await completeRecorded(ref)).toBe(true);
      // The request and the sweep may both complete one payment: the second move must not count twice.
      expect(await completeRecorded(ref)).toBe(false);
    }
    await failRecorded(toFail!, "signature expired");
    expect(await kept(env.DB, tenant.id)).toEqual(await oracle(env.DB, tenant.id));

    // Deletes (a service's paywalls keep their history; a direct delete of records takes them back out).
    await env.DB.prepare(
      "DELETE FROM transactions WHERE id IN (SELECT id FROM transactions WHERE tenant_id = ? AND status = 'COMPLETED' LIMIT 20)",
    )
      .bind(tenant.id)
      .run();
    await env.DB.prepare("DELETE FROM events WHERE id IN (SELECT id FROM events WHERE tenant_id = ? LIMIT 30)")
      .bind(tenant.id)
      .run();
    expect(await kept(env.DB, tenant.id)).toEqual(await oracle(env.DB, tenant.id));
    // The other tenant's totals are its own.
    expect(await kept(env.DB, other.id)).toEqual(await oracle(env.DB, other.id));
  });

  it("count a transaction's revenue when it completes, not while it is pending or after it failed", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const today = lastUtcDays(new Date(), 1);
    const revenue = async () => (await daily(tenant.id, today, "tenant", "USDC"))[0]?.revenue;
    const record = (amount: string) => recordPayment(paywall, { network: "base-sepolia", amount });
    const a = await record("2500000");
    const b = await record("700");
    expect(await revenue()).toBe("0");
    await completeRecorded(a);
    expect(await revenue()).toBe("2500000");
    await failRecorded(b, "insufficient funds");
    // A settled payment does not move again: completing a FAILED one changes nothing.
    expect(await completeRecorded(b)).toBe(false);
    expect(await revenue()).toBe("2500000");
  });

  it("keep every digit of a day's revenue beyond 2^53 micro-USDC", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const amount = "9999999999999999"; // the largest amount a transaction may carry
    for (let i = 0; i < 3; i++) await recordPayment(paywall, { network: "base-sepolia", amount, status: "COMPLETED" });
    const [day] = await daily(tenant.id, lastUtcDays(new Date(), 1), "tenant", "USDC");
    expect(day?.revenue).toBe("29999999999999997");
  });

  it("read one entry per asked day, zeros for empty days, in the scope of a paywall or a service", async () => {
    const tenant = await createTenant();
    const [a, b] = [await createPaywallFor(tenant), await createPaywallFor(tenant)];
    const now = new Date();
    const days = lastUtcDays(now, 30);
    const threeDaysAgo = new Date(now.getTime() - 3 * 86_400_000);
    const tx = (paywall: typeof a, amount: string, at: Date, status: "COMPLETED" | "FAILED" = "COMPLETED") =>
      recordPayment(paywall, { network: "base-sepolia", amount, status, at });
    await tx(a, "100", now);
    await tx(a, "20", threeDaysAgo);
    await tx(b, "3", threeDaysAgo);
    await tx(b, "5", threeDaysAgo, "FAILED");

    const all = await daily(tenant.id, days, "tenant", "USDC");
    expect(all.map((d) => d.day)).toEqual(days);
    expect(all.filter((d) => d.revenue !== "0").map((d) => [d.day, d.revenue])).toEqual([
      [days[26], "23"],
      [days[29], "100"],
    ]);
    expect(all[26]).toMatchObject({ requests: 3, successes: 2, errors: 1 });
    const onlyB = await daily(tenant.id, days, statsScope({ paywallId: b.id }), "USDC");
    expect(onlyB.filter((d) => d.revenue !== "0").map((d) => d.revenue)).toEqual(["3"]);
    const serviceA = await daily(tenant.id, days, statsScope({ serviceId: a.serviceId! }), "USDC");
    expect(serviceA.filter((d) => d.revenue !== "0").map((d) => d.revenue)).toEqual(["20", "100"]);
    // Another tenant asking for this tenant's paywall scope reads nothing.
    const stranger = await createTenant();
    const foreign = await daily(stranger.id, days, statsScope({ paywallId: a.id }), "USDC");
    expect(foreign.every((d) => d.revenue === "0" && d.errors === 0)).toBe(true);
    expect(foreign).toEqual(days.map((day) => ({ day, requests: 0, successes: 0, errors: 0, revenue: "0" })));
  });
});

describe("daily roll-ups: revenue per network", () => {
  it("never adds two tokens: a chart reads one token's networks, the totals add networks per token", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const now = new Date();
    const weekAgo = new Date(now.getTime() - 6 * 86_400_000);
    for (const [network, amount, at] of [
      ["base-sepolia", "100", now],
      ["arc-testnet", "20", weekAgo],
      ["tempo-testnet", "7", now],
      ["tempo-testnet", "1", weekAgo],
    ] as const) {
      await recordPayment(paywall, { network, amount, at, status: "COMPLETED" });
    }
    const today = lastUtcDays(now, 1);
    expect((await daily(tenant.id, today, "tenant", "USDC"))[0]?.revenue).toBe("100");
    expect((await daily(tenant.id, today, "tenant", "pathUSD"))[0]?.revenue).toBe("7");
    const since = [today[0]!, lastUtcDays(now, 7)[0]!];
    const perNetwork = await networkTotals(tenant.id, `paywall:${paywall.id}`, since);
    expect(perNetwork).toEqual([
      { network: "arc-testnet", sums: ["0", "20"] },
      { network: "base-sepolia", sums: ["100", "100"] },
      { network: "tempo-testnet", sums: ["7", "8"] },
    ]);
    expect(sumsPerToken(perNetwork)).toEqual([
      { currency: "USDC", sums: ["100", "120"] },
      { currency: "pathUSD", sums: ["7", "8"] },
    ]);
    expect(await networkTotals(tenant.id, "tenant", since, ["base-sepolia"])).toEqual([
      { network: "base-sepolia", sums: ["100", "100"] },
    ]);
  });
});

describe("daily roll-ups: the edge cache", () => {
  it("counts SUCCESS events by metadata.cache in each scope, and takes them back when they are deleted", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const refs: PaymentRef[] = [];
    for (const cache of ["hit", "hit", "miss", undefined] as const) {
      const ref = await recordPayment(paywall, { network: "base-sepolia" });
      await completePayment(db(), ref, txHash(), { statusCode: 200, responseTime: null, ...(cache ? { cache } : {}) });
      refs.push(ref);
    }
    // An ERROR event carrying cache (a hit whose settlement was refused) is not a paid answer: not counted.
    const refused = await recordPayment(paywall, { network: "base-sepolia" });
    await failPayment(db(), refused, "settlement failed", { statusCode: 200, responseTime: null, cache: "hit" });
    const days = lastUtcDays(new Date(), 30);
    for (const scope of ["tenant", `paywall:${paywall.id}`, `service:${paywall.serviceId}`] as const) {
      expect(await findCacheTotals(db(), tenant.id, days, scope)).toEqual({ hits: 2, misses: 1 });
    }
    await env.DB.prepare("DELETE FROM events WHERE tenant_id = ? AND json_extract(metadata, '$.cache') = 'hit'")
      .bind(tenant.id)
      .run();
    expect(await findCacheTotals(db(), tenant.id, days)).toEqual({ hits: 0, misses: 1 });
  });
});

describe("daily roll-ups: backfill", () => {
  it("the migration totals the records stored before it, and the triggers carry on from there", async () => {
    const d1 = (env as unknown as { BACKFILL_DB: D1Database }).BACKFILL_DB;
    const migrations = env.TEST_MIGRATIONS;
    const at = migrations.findIndex((m) => m.name.startsWith("0005_"));
    expect(at).toBeGreaterThan(0);
    expect(
      (await d1.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'd1_migrations'").first<{ n: number }>())?.n,
    ).toBe(0);
    // Every migration but the backfill's own, and those that change its roll-up table (the edge cache's columns;
    // revenue per network, whose own backfill runs after it), so that today's schema can write the records stored
    // before them.
    await applyD1Migrations(
      d1,
      migrations.filter((m, i) => i !== at && !m.name.includes("_cache_stats") && !m.name.includes("_daily_revenue_")),
    );

    const old = getDb(d1);
    const now = new Date();
    const tenants: Tenant[] = [];
    for (const i of [1, 2]) {
      const [tenant] = await old
        .insert(tenantsTable)
        .values({
          id: `ten_backfill_${i}`,
          email: `backfill${i}@example.com`,
          name: "B",
          walletAddress: address(),
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      tenants.push(tenant!);
      await writeDemoData(old, tenant!, 120);
    }
    const before = await d1.prepare("SELECT count(*) AS n FROM transactions").first<{ n: number }>();
    expect(before?.n).toBe(240);

    await applyD1Migrations(d1, migrations);
    for (const t of tenants) {
      const expected = await oracle(d1, t.id);
      expect(Object.keys(expected.traffic).length).toBeGreaterThan(3);
      expect(Object.keys(expected.revenue).length).toBeGreaterThan(3);
      expect(await kept(d1, t.id)).toEqual(expected);
    }
    // Records written after the migration add to the backfilled totals.
    const [pending] = (
      await d1
        .prepare("SELECT id FROM transactions WHERE tenant_id = ? AND status = 'PENDING' LIMIT 1")
        .bind(tenants[0]!.id)
        .all<{ id: string }>()
    ).results;
    if (pending) {
      // A write in place, as the code of that schema's time made it (the roll-up triggers carry it).
      await forceStatusStatement(d1, pending.id, { status: "COMPLETED", settledAt: Date.now() }).run();
    }
    await writeDemoData(old, tenants[0]!, 40);
    expect(await kept(d1, tenants[0]!.id)).toEqual(await oracle(d1, tenants[0]!.id));
  });
});
