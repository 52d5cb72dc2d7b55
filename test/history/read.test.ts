import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { SCOPES, type Scope } from "../../src/core/keys/scopes.ts";
import { api } from "../support/client.ts";
import { createApiKey, db } from "../support/factories.ts";
import { recordPayment } from "../support/payments.ts";
import { seededRandom } from "../support/random.ts";
import { createPaywallFor } from "./support.ts";

type Row = Record<string, unknown> & { id: string; createdAt: string };

/** Every page of a list, followed through `hasMore`. */
async function readAll(path: string, key: string, limit = 100): Promise<Row[]> {
  const rows: Row[] = [];
  for (let offset = 0; ; offset += limit) {
    const sep = path.includes("?") ? "&" : "?";
    const { status, body } = await api(`${path}${sep}limit=${limit}&offset=${offset}`, { key });
    expect(status).toBe(200);
    rows.push(...body.data);
    if (!body.meta.pagination.hasMore) return rows;
  }
}

const newestFirst = (a: Row, b: Row) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);

describe("reading history", () => {
  let key: string;
  let tenantId: string;
  let allTx: Row[];
  let allEvents: Row[];

  beforeAll(async () => {
    const made = await createApiKey({ scopes: ["transactions:read", "events:read"] });
    key = made.key;
    tenantId = made.tenant.id;
    // Seeded: every filter below finds rows in every run (with Math.random one could come up empty).
    await writeDemoData(db(), made.tenant, 120, seededRandom(120));
    allTx = await readAll("/v1/transactions", key);
    allEvents = await readAll("/v1/events", key);
  });

  it("shows each payment on its network's protocol, as the gateway records it: MPP on Tempo, x402 elsewhere", () => {
    const pairs = new Set(allTx.map((t) => `${t.network} ${t.protocol}`));
    expect([...pairs].sort()).toEqual(["base-sepolia x402", "tempo-testnet mpp"]);
  });

  it("returns everything the gateway wrote, newest first, with paywall summaries", async () => {
    const stored = await env.DB.prepare("SELECT count(*) AS n FROM transactions WHERE tenant_id = ?")
      .bind(tenantId)
      .first<{ n: number }>();
    expect(allTx).toHaveLength(stored!.n);
    expect(allTx.length).toBe(120);
    // A REQUEST per payment, and an outcome (SUCCESS or ERROR) per payment no longer PENDING.
    expect(allEvents).toHaveLength(240 - allTx.filter((t) => t.status === "PENDING").length);
    expect([...allTx].sort(newestFirst)).toEqual(allTx);
    expect([...allEvents].sort(newestFirst)).toEqual(allEvents);
    for (const row of [...allTx, ...allEvents])
      expect(row.Paywall).toMatchObject({ id: row.paywallId, slug: expect.any(String) });
    expect(new Set(allTx.map((t) => t.id)).size).toBe(120);
  });

  it("pages without gaps or repeats, and reports total and hasMore", async () => {
    const first = await api("/v1/transactions?limit=50", { key });
    expect(first.body.meta.pagination).toEqual({ total: 120, limit: 50, offset: 0, hasMore: true });
    const last = await api("/v1/transactions?limit=50&offset=100", { key });
    expect(last.body.meta.pagination).toEqual({ total: 120, limit: 50, offset: 100, hasMore: false });
    expect(last.body.data).toHaveLength(20);
    const pages = await readAll("/v1/transactions", key, 7);
    expect(pages.map((r) => r.id)).toEqual(allTx.map((r) => r.id));
  });

  const txFilters: [string, (r: Row) => boolean][] = [
    ["status=COMPLETED", (r) => r.status === "COMPLETED"],
    ["status=FAILED", (r) => r.status === "FAILED"],
    ["status=PENDING", (r) => r.status === "PENDING"],
    ["network=tempo-testnet", (r) => r.network === "tempo-testnet"],
    ["protocol=mpp", (r) => r.protocol === "mpp"],
    [
      "protocol=x402&network=base-sepolia&status=COMPLETED",
      (r) => r.protocol === "x402" && r.network === "base-sepolia" && r.status === "COMPLETED",
    ],
  ];

  it.each(txFilters)("filters transactions by %s", async (query, predicate) => {
    const expected = allTx.filter(predicate);
    expect(expected.length).toBeGreaterThan(0);
    const rows = await readAll(`/v1/transactions?${query}`, key);
    expect(rows.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    const { body } = await api(`/v1/transactions?${query}&limit=1`, { key });
    expect(body.meta.pagination.total).toBe(expected.length);
  });

  it("filters by paywall, service and an inclusive time range, alone and combined", async () => {
    const paywallId = allTx[0]!.paywallId as string;
    const serviceId = allTx[0]!.serviceId as string;
    const sorted = [...allTx].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const from = sorted[30]!.createdAt;
    const to = sorted[90]!.createdAt;
    const inRange = (r: Row) => r.createdAt >= from && r.createdAt <= to;
    const checks: [string, (r: Row) => boolean][] = [
      [`paywallId=${paywallId}`, (r) => r.paywallId === paywallId],
      [`serviceId=${serviceId}`, (r) => r.serviceId === serviceId],
      [`from=${from}&to=${to}`, inRange],
      [`from=${from}`, (r) => r.createdAt >= from],
      [
        `paywallId=${paywallId}&from=${from}&to=${to}&status=COMPLETED`,
        (r) => r.paywallId === paywallId && inRange(r) && r.status === "COMPLETED",
      ],
    ];
    for (const [query, predicate] of checks) {
      const rows = await readAll(`/v1/transactions?${query}`, key);
      expect(
        rows.map((r) => r.id),
        query,
      ).toEqual(allTx.filter(predicate).map((r) => r.id));
    }
    const events = await readAll(`/v1/events?paywallId=${paywallId}&eventType=ERROR&from=${from}`, key);
    expect(events.map((r) => r.id)).toEqual(
      allEvents.filter((r) => r.paywallId === paywallId && r.eventType === "ERROR" && r.createdAt >= from).map((r) => r.id),
    );
  });

  it("meta.stats counts each event type over the whole filtered set, matching an independent count", async () => {
    const paywallId = allEvents[0]!.paywallId as string;
    for (const query of ["", `paywallId=${paywallId}`, "eventType=ERROR"]) {
      const { body } = await api(`/v1/events?limit=5${query ? `&${query}` : ""}`, { key });
      const where = [
        "tenant_id = ?",
        ...(query.startsWith("paywallId") ? ["paywall_id = ?"] : []),
        ...(query.startsWith("eventType") ? ["event_type = 'ERROR'"] : []),
      ];
      const params = [tenantId, ...(query.startsWith("paywallId") ? [paywallId] : [])];
      const counted = await env.DB.prepare(
        `SELECT event_type AS t, count(*) AS n FROM events WHERE ${where.join(" AND ")} GROUP BY event_type`,
      )
        .bind(...params)
        .all<{ t: string; n: number }>();
      const expected = { REQUEST: 0, SUCCESS: 0, ERROR: 0, ...Object.fromEntries(counted.results.map((r) => [r.t, r.n])) };
      expect(body.meta.stats, query).toEqual(expected);
      expect(body.meta.pagination.total).toBe(expected.REQUEST + expected.SUCCESS + expected.ERROR);
      expect(body.data).toHaveLength(5);
    }
  });

  it("gets one record by id, and keeps history after its paywall is deleted", async () => {
    const tx = allTx[3]!;
    const one = await api(`/v1/transactions/${tx.id}`, { key });
    expect(one.body.data).toEqual(tx);
    expect((await api(`/v1/events/${allEvents[0]!.id}`, { key })).body.data).toEqual(allEvents[0]);
    expect((await api("/v1/transactions/txn_missing_000", { key })).status).toBe(404);

    const own = await createApiKey({ scopes: ["transactions:read", "paywalls:write"] });
    const paywall = await createPaywallFor(own.tenant);
    const { transactionId: id } = await recordPayment(paywall, { network: "base-sepolia", amount: "7", status: "COMPLETED" });
    expect((await api(`/v1/paywalls/${paywall.id}`, { key: own.key, method: "DELETE" })).status).toBe(200);
    const kept = await api(`/v1/transactions/${id}`, { key: own.key });
    expect(kept.body.data).toMatchObject({ id, paywallId: paywall.id, Paywall: null });
    const byPaywall = await api(`/v1/transactions?paywallId=${paywall.id}`, { key: own.key });
    expect(byPaywall.body.data.map((r: Row) => r.id)).toEqual([id]);
  });

  it("refuses invalid filter values with VALIDATION_ERROR", async () => {
    for (const query of [
      "status=DONE",
      "network=ethereum",
      "protocol=ach",
      "from=yesterday",
      "from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z",
      "limit=0",
      "limit=101",
      "offset=-1",
      "sort=asc",
    ]) {
      const res = await api(`/v1/transactions?${query}`, { key });
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe("VALIDATION_ERROR");
      expect(res.body.details.length).toBeGreaterThan(0);
    }
    for (const query of ["eventType=CLICK", "to=not-a-date", "status=COMPLETED"]) {
      const res = await api(`/v1/events?${query}`, { key });
      expect(res.status, query).toBe(400);
    }
  });

  it("refuses filters naming another tenant's paywall or service, and never shows their records", async () => {
    const other = await createApiKey({ scopes: ["transactions:read", "events:read"] });
    const paywallId = allTx[0]!.paywallId as string;
    const serviceId = allTx[0]!.serviceId as string;
    for (const path of [`/v1/transactions?paywallId=${paywallId}`, `/v1/events?serviceId=${serviceId}`]) {
      const res = await api(path, { key: other.key });
      expect(res.status, path).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
    }
    expect((await api(`/v1/transactions/${allTx[0]!.id}`, { key: other.key })).body.code).toBe("FORBIDDEN");
    expect((await api("/v1/transactions", { key: other.key })).body.data).toEqual([]);
    expect((await api("/v1/events", { key: other.key })).body.meta.stats).toEqual({ REQUEST: 0, SUCCESS: 0, ERROR: 0 });
  });

  it("needs transactions:read and events:read respectively", async () => {
    const cases: [string, Scope][] = [
      ["/v1/transactions", "transactions:read"],
      [`/v1/transactions/${allTx[0]!.id}`, "transactions:read"],
      ["/v1/events", "events:read"],
      [`/v1/events/${allEvents[0]!.id}`, "events:read"],
    ];
    for (const [path, needed] of cases) {
      const others = SCOPES.filter((s) => s !== needed);
      const without = await createApiKey({ scopes: others });
      const res = await api(path, { key: without.key });
      expect(res.status, path).toBe(403);
      expect(res.body.code).toBe("INSUFFICIENT_SCOPE");
    }
  });
});
