// The daily roll-ups (migrations/0005) against an oracle computed here, in JavaScript with BigInt, from the
// raw rows: through demo data, settlement (PENDING → COMPLETED counted once), deletes, big amounts, and the
// backfill of records stored before the migration.
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { completePayment, failPayment, type PaymentRef } from "../../src/core/ledger/ledger.ts";
import { getDb } from "../../src/db/client.ts";
import { findCacheTotals, findDailyStats, statsScope } from "../../src/db/daily-stats.ts";
import { type Tenant, tenants as tenantsTable } from "../../src/db/schema.ts";
import { lastUtcDays } from "../../src/lib/utc-days.ts";
import { createPaywallFor } from "../history/support.ts";
import { createTenant, db } from "../support/factories.ts";
import { address, completeRecorded, failRecorded, recordPayment, txHash } from "../support/payments.ts";

interface RawRecord {
  tenant_id: string;
  paywall_id: string;
  service_id: string | null;
  created_at: number;
  status?: string;
  amount?: string;
  event_type?: string;
}

type Totals = Record<string, { revenue: bigint; requests: number; successes: number; errors: number }>;

/** What the roll-ups must hold for `tenantId`, by `scope day`: computed from every raw row, without the triggers' SQL. */
async function oracle(d1: D1Database, tenantId: string): Promise<Totals> {
  const read = async (sql: string) => (await d1.prepare(sql).bind(tenantId).all<RawRecord>()).results;
  const transactions = await read(
    "SELECT tenant_id, paywall_id, service_id, created_at, status, amount FROM transactions WHERE tenant_id = ?",
  );
  const events = await read("SELECT tenant_id, paywall_id, service_id, created_at, event_type FROM events WHERE tenant_id = ?");
  const totals: Totals = {};
  const add = (r: RawRecord, change: Partial<{ revenue: bigint; requests: number; successes: number; errors: number }>) => {
    const day = new Date(r.created_at).toISOString().slice(0, 10);
    const scopes = ["tenant", `paywall:${r.paywall_id}`, ...(r.service_id ? [`service:${r.service_id}`] : [])];
    for (const scope of scopes) {
      const key = `${scope} ${day}`;
      totals[key] ??= { revenue: 0n, requests: 0, successes: 0, errors: 0 };
      const t = totals[key];
      t.revenue += change.revenue ?? 0n;
      t.requests += change.requests ?? 0;
      t.successes += change.successes ?? 0;
      t.errors += change.errors ?? 0;
    }
  };
  for (const t of transactions) if (t.status === "COMPLETED") add(t, { revenue: BigInt(t.amount as string) });
  for (const e of events) {
    add(e, {
      requests: Number(e.event_type === "REQUEST"),
      successes: Number(e.event_type === "SUCCESS"),
      errors: Number(e.event_type === "ERROR"),
    });
  }
  return totals;
}

/** The kept rows of `tenantId`, zero rows left out (a row may fall back to zero after a delete). */
async function kept(d1: D1Database, tenantId: string): Promise<Totals> {
  const rows = await d1
    .prepare(
      "SELECT scope, day, CAST(revenue AS TEXT) AS revenue, requests, successes, errors FROM daily_stats WHERE tenant_id = ?",
    )
    .bind(tenantId)
    .all<{ scope: string; day: string; revenue: string; requests: number; successes: number; errors: number }>();
  return Object.fromEntries(
    rows.results
      .filter((r) => r.revenue !== "0" || r.requests || r.successes || r.errors)
      .map((r) => [
        `${r.scope} ${r.day}`,
        { revenue: BigInt(r.revenue), requests: r.requests, successes: r.successes, errors: r.errors },
      ]),
  );
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
    const revenue = async () => (await findDailyStats(db(), tenant.id, today))[0]?.revenue;
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
    const [day] = await findDailyStats(db(), tenant.id, lastUtcDays(new Date(), 1));
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

    const all = await findDailyStats(db(), tenant.id, days);
    expect(all.map((d) => d.day)).toEqual(days);
    expect(all.filter((d) => d.revenue !== "0").map((d) => [d.day, d.revenue])).toEqual([
      [days[26], "23"],
      [days[29], "100"],
    ]);
    expect(all[26]).toMatchObject({ requests: 3, successes: 2, errors: 1 });
    const onlyB = await findDailyStats(db(), tenant.id, days, statsScope({ paywallId: b.id }));
    expect(onlyB.filter((d) => d.revenue !== "0").map((d) => d.revenue)).toEqual(["3"]);
    const serviceA = await findDailyStats(db(), tenant.id, days, statsScope({ serviceId: a.serviceId! }));
    expect(serviceA.filter((d) => d.revenue !== "0").map((d) => d.revenue)).toEqual(["20", "100"]);
    // Another tenant asking for this tenant's paywall scope reads nothing.
    const stranger = await createTenant();
    const foreign = await findDailyStats(db(), stranger.id, days, statsScope({ paywallId: a.id }));
    expect(foreign.every((d) => d.revenue === "0" && d.errors === 0)).toBe(true);
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
    // Every migration but the backfill's own (and the edge cache's columns, which it adds to the roll-up table), so
    // that today's schema can write the records stored before it.
    await applyD1Migrations(
      d1,
      migrations.filter((m, i) => i !== at && !m.name.includes("_cache_stats")),
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
      expect(Object.keys(expected).length).toBeGreaterThan(3);
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
      await d1
        .prepare("UPDATE transactions SET status = 'COMPLETED', settled_at = ? WHERE id = ?")
        .bind(Date.now(), pending.id)
        .run();
    }
    await writeDemoData(old, tenants[0]!, 40);
    expect(await kept(d1, tenants[0]!.id)).toEqual(await oracle(d1, tenants[0]!.id));
  });
});
