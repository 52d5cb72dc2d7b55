// GET /v1/services and GET /v1/paywalls: pagination, order, filters, embedding, query validation.
import { beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids.ts";
import { api } from "../support/client.ts";
import { insertRows, paywallRow, serviceRow } from "../support/factories.ts";
import {
  type Actor,
  actor,
  createPaywall,
  createService,
  expectInvalid,
  ISO_DATE,
  type Paywall,
  proxyPaywallBody,
  routePaywallBody,
  type Service,
} from "../support/resources.ts";

const ids = (list: { id: string }[]) => list.map((x) => x.id);

/** Walks every page of `path` with `limit`, checking the pagination block of each page. */
async function walk(key: string, path: string, limit: number) {
  const seen: { id: string }[] = [];
  let total: number | undefined;
  for (let offset = 0; ; offset += limit) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await api(`${path}${sep}limit=${limit}&offset=${offset}`, { key });
    expect(res.status, res.text).toBe(200);
    total ??= res.body.meta.pagination.total;
    expect(res.body.meta).toEqual({
      requestId: expect.stringMatching(/^req_/),
      timestamp: expect.stringMatching(ISO_DATE),
      pagination: { total, limit, offset, hasMore: offset + limit < (total as number) },
    });
    expect(res.body.data.length).toBe(Math.max(0, Math.min(limit, (total as number) - offset)));
    seen.push(...res.body.data);
    if (!res.body.meta.pagination.hasMore) break;
  }
  return { items: seen, total: total as number };
}

describe("GET /v1/services", () => {
  it("an empty list for a new tenant", async () => {
    const who = await actor();
    const res = await api("/v1/services", { key: who.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [],
      meta: {
        requestId: expect.any(String),
        timestamp: expect.any(String),
        pagination: { total: 0, limit: 20, offset: 0, hasMore: false },
      },
    });
  });

  it("pages newest first with limit/offset/total/hasMore", async () => {
    const who = await actor();
    const created: Service[] = [];
    for (let i = 0; i < 5; i++) created.push(await createService(who, { name: `S${i}` }));
    const newestFirst = ids([...created].reverse());

    const first = await api("/v1/services?limit=2", { key: who.key });
    expect(ids(first.body.data)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.meta.pagination).toEqual({ total: 5, limit: 2, offset: 0, hasMore: true });
    const middle = await api("/v1/services?limit=2&offset=2", { key: who.key });
    expect(ids(middle.body.data)).toEqual(newestFirst.slice(2, 4));
    expect(middle.body.meta.pagination).toEqual({ total: 5, limit: 2, offset: 2, hasMore: true });
    const last = await api("/v1/services?limit=2&offset=4", { key: who.key });
    expect(ids(last.body.data)).toEqual(newestFirst.slice(4));
    expect(last.body.meta.pagination).toEqual({ total: 5, limit: 2, offset: 4, hasMore: false });
    const beyond = await api("/v1/services?offset=10", { key: who.key });
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.pagination).toEqual({ total: 5, limit: 20, offset: 10, hasMore: false });
    const exact = await api("/v1/services?limit=5", { key: who.key });
    expect(exact.body.meta.pagination.hasMore).toBe(false);
    // The list items are the full services.
    const all = await api("/v1/services?limit=100", { key: who.key });
    expect(all.body.data).toEqual([...created].reverse());
  });

  it("equal createdAt: a stable order (by id, descending), no row repeated or skipped across pages", async () => {
    const who = await actor();
    const at = new Date("2030-01-01T00:00:00.000Z");
    const rows = Array.from({ length: 7 }, (_, i) =>
      serviceRow(who.tenant.id, newId("svc"), { name: `tie-${i}`, createdAt: at, updatedAt: at }),
    );
    await insertRows("services", rows);
    const expectedOrder = rows
      .map((r) => r.id)
      .sort()
      .reverse();
    for (const limit of [1, 2, 3]) {
      const { items, total } = await walk(who.key, "/v1/services", limit);
      expect(total).toBe(7);
      expect(ids(items)).toEqual(expectedOrder);
    }
  });

  it("filter mode", async () => {
    const who = await actor();
    const t1 = await createService(who);
    const m = await createService(who, { mode: "mainnet", networks: ["base"] });
    const t2 = await createService(who);
    const testnet = await api("/v1/services?mode=testnet", { key: who.key });
    expect(ids(testnet.body.data)).toEqual([t2.id, t1.id]);
    expect(testnet.body.meta.pagination.total).toBe(2);
    const mainnet = await api("/v1/services?mode=mainnet&limit=1", { key: who.key });
    expect(ids(mainnet.body.data)).toEqual([m.id]);
    expect(mainnet.body.meta.pagination).toEqual({ total: 1, limit: 1, offset: 0, hasMore: false });
  });

  it("each service of a page embeds exactly its own paywalls, newest first", async () => {
    const who = await actor();
    const s1 = await createService(who, { name: "one" });
    const s2 = await createService(who, { name: "two" });
    const s3 = await createService(who, { name: "three" });
    const s4 = await createService(who, { name: "four" });
    const p1a = await createPaywall(who, routePaywallBody(s1.id));
    const p3 = await createPaywall(who, proxyPaywallBody({ serviceId: s3.id }));
    const p1b = await createPaywall(who, proxyPaywallBody({ serviceId: s1.id }));
    const p4 = await createPaywall(who, routePaywallBody(s4.id));
    await createPaywall(who, proxyPaywallBody()); // no service: embedded nowhere

    const page = await api("/v1/services?limit=3&offset=1", { key: who.key });
    expect(ids(page.body.data)).toEqual([s3.id, s2.id, s1.id]);
    const [e3, e2, e1] = page.body.data;
    expect(e3.Paywall).toEqual([p3]);
    expect(e2.Paywall).toEqual([]);
    expect(e1.Paywall).toEqual([p1b, p1a]);

    const head = await api("/v1/services?limit=1", { key: who.key });
    expect(head.body.data[0].Paywall).toEqual([p4]);
    // The embedded form is the same as the paywall's own GET.
    expect((await api(`/v1/paywalls/${p1a.id}`, { key: who.key })).body.data).toEqual(p1a);
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=abc", "limit"],
    ["limit=1.5", "limit"],
    ["limit=", "limit"],
    ["offset=-1", "offset"],
    ["offset=abc", "offset"],
    ["mode=devnet", "mode"],
    ["enabled=true", "enabled"],
    ["sort=name", "sort"],
  ])("?%s → 400 naming %s", async (query, path) => {
    const who = await actor();
    expectInvalid(await api(`/v1/services?${query}`, { key: who.key }), path);
  });

  it("limit=100 and limit=1 are accepted", async () => {
    const who = await actor();
    expect((await api("/v1/services?limit=100", { key: who.key })).body.meta.pagination.limit).toBe(100);
    expect((await api("/v1/services?limit=1", { key: who.key })).body.meta.pagination.limit).toBe(1);
  });
});

describe("GET /v1/paywalls", () => {
  let who: Actor;
  let a: Service;
  let b: Service;
  const pw = {} as Record<"a1" | "a2" | "b1" | "free" | "a3", Paywall>;

  beforeAll(async () => {
    who = await actor();
    a = await createService(who);
    b = await createService(who);
    pw.a1 = await createPaywall(who, routePaywallBody(a.id));
    pw.a2 = await createPaywall(who, routePaywallBody(a.id, { enabled: false }));
    pw.b1 = await createPaywall(who, proxyPaywallBody({ serviceId: b.id }));
    pw.free = await createPaywall(who, proxyPaywallBody({ enabled: false }));
    pw.a3 = await createPaywall(who, proxyPaywallBody({ serviceId: a.id }));
  });

  it("all paywalls newest first, with defaults limit 20 offset 0", async () => {
    const res = await api("/v1/paywalls", { key: who.key });
    expect(res.body.data).toEqual([pw.a3, pw.free, pw.b1, pw.a2, pw.a1]);
    expect(res.body.meta.pagination).toEqual({ total: 5, limit: 20, offset: 0, hasMore: false });
  });

  it("pages across the list", async () => {
    const { items, total } = await walk(who.key, "/v1/paywalls", 2);
    expect(total).toBe(5);
    expect(ids(items)).toEqual(ids([pw.a3, pw.free, pw.b1, pw.a2, pw.a1]));
  });

  it.each([
    ["serviceId of A", () => `serviceId=${a.id}`, () => [pw.a3, pw.a2, pw.a1]],
    ["serviceId of B", () => `serviceId=${b.id}`, () => [pw.b1]],
    ["enabled=true", () => "enabled=true", () => [pw.a3, pw.b1, pw.a1]],
    ["enabled=false", () => "enabled=false", () => [pw.free, pw.a2]],
    ["serviceId of A and enabled=false", () => `serviceId=${a.id}&enabled=false`, () => [pw.a2]],
    ["serviceId of B and enabled=false", () => `serviceId=${b.id}&enabled=false`, () => []],
  ])("filter %s", async (_, query, expected) => {
    const res = await api(`/v1/paywalls?${query()}`, { key: who.key });
    expect(res.status, res.text).toBe(200);
    expect(ids(res.body.data)).toEqual(ids(expected()));
    expect(res.body.meta.pagination.total).toBe(expected().length);
  });

  it("filtered pages count the filtered total", async () => {
    const { items, total } = await walk(who.key, `/v1/paywalls?serviceId=${a.id}`, 1);
    expect(total).toBe(3);
    expect(ids(items)).toEqual(ids([pw.a3, pw.a2, pw.a1]));
  });

  it("equal createdAt: stable order by id across pages", async () => {
    const other = await actor();
    const svc = await createService(other);
    const template = await createPaywall(other, routePaywallBody(svc.id));
    const at = new Date("2030-01-01T00:00:00.000Z");
    const rows = Array.from({ length: 6 }, (_, i) =>
      paywallRow(other.tenant, newId("pw"), {
        serviceId: svc.id,
        slug: `tie-${i}`,
        targetType: "ROUTE",
        targetUrl: null,
        targetRoute: "/tie",
        createdAt: at,
        updatedAt: at,
      }),
    );
    await insertRows("paywalls", rows);
    const expectedOrder = [
      ...rows
        .map((r) => r.id)
        .sort()
        .reverse(),
      template.id,
    ];
    const { items } = await walk(other.key, "/v1/paywalls", 4);
    expect(ids(items)).toEqual(expectedOrder);
    const { items: viaFilter } = await walk(other.key, `/v1/paywalls?serviceId=${svc.id}&enabled=true`, 5);
    expect(ids(viaFilter)).toEqual(expectedOrder);
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=abc", "limit"],
    ["offset=-1", "offset"],
    ["enabled=yes", "enabled"],
    ["enabled=1", "enabled"],
    ["serviceId=", "serviceId"],
    ["mode=testnet", "mode"],
    ["status=active", "status"],
  ])("?%s → 400 naming %s", async (query, path) => {
    expectInvalid(await api(`/v1/paywalls?${query}`, { key: who.key }), path);
  });
});
