// Guarantees that must hold under concurrent requests: the slug race, the beta caps, and the atomic service delete.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids.ts";
import { type ApiResult, api } from "../support/client.ts";
import { insertRows, paywallRow, serviceRow } from "../support/factories.ts";
import { gatedD1 } from "../support/fake-bindings.ts";
import {
  actor,
  createPaywall,
  createService,
  expectError,
  expectInvalid,
  proxyPaywallBody,
  routePaywallBody,
  serviceBody,
  storedPaywall,
} from "../support/resources.ts";

const count = async (sql: string, ...params: unknown[]) =>
  (
    (await env.DB.prepare(sql)
      .bind(...params)
      .first<{ n: number }>()) as { n: number }
  ).n;

const statuses = (results: ApiResult[]) => results.map((r) => r.status).sort();
const codes = (results: ApiResult[]) => results.filter((r) => r.status >= 400).map((r) => r.body.code);

describe("slug race", () => {
  it("10 concurrent creates of one slug in one service → exactly one 201, nine 409 CONFLICT; another service is not affected", async () => {
    const who = await actor();
    const a = await createService(who);
    const b = await createService(who);
    const [other, ...race] = await Promise.all([
      api("/v1/paywalls", { key: who.key, method: "POST", body: routePaywallBody(b.id, { slug: "race" }) }),
      ...Array.from({ length: 10 }, (_, i) =>
        api("/v1/paywalls", { key: who.key, method: "POST", body: routePaywallBody(a.id, { slug: "race", name: `racer ${i}` }) }),
      ),
    ]);
    expect(other?.status, other?.text).toBe(201);
    expect(statuses(race)).toEqual([201, ...Array(9).fill(409)]);
    for (const r of race.filter((r) => r.status === 409)) expectError(r, 409, "CONFLICT");
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ? AND slug = ?", a.id, "race")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ? AND slug = ?", b.id, "race")).toBe(1);
    // The winner is the one stored.
    const winner = race.find((r) => r.status === 201);
    expect((await storedPaywall(winner?.body.data.id))?.name).toBe(winner?.body.data.name);
  });

  it("two concurrent moves of same-slug paywalls into one service → one 200, one 409", async () => {
    const who = await actor();
    const target = await createService(who);
    const b = await createService(who);
    const c = await createService(who);
    const pb = await createPaywall(who, routePaywallBody(b.id, { slug: "mover" }));
    const pc = await createPaywall(who, routePaywallBody(c.id, { slug: "mover" }));
    const results = await Promise.all(
      [pb, pc].map((p) => api(`/v1/paywalls/${p.id}`, { key: who.key, method: "PATCH", body: { serviceId: target.id } })),
    );
    expect(statuses(results)).toEqual([200, 409]);
    expect(codes(results)).toEqual(["CONFLICT"]);
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ? AND slug = 'mover'", target.id)).toBe(1);
  });
});

describe("beta caps under parallel creates", () => {
  it("services, cap 3 via config: with 1 held, 6 parallel creates → exactly 2 succeed, 4 × 403 BETA_LIMIT_SERVICES", async () => {
    const who = await actor();
    const capped = { MAX_SERVICES_PER_TENANT: "3" };
    const post = () => api("/v1/services", { key: who.key, method: "POST", body: serviceBody(), env: capped });
    expect((await post()).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 6 }, post));
    expect(statuses(results)).toEqual([201, 201, 403, 403, 403, 403]);
    for (const r of results.filter((r) => r.status === 403)) expectError(r, 403, "BETA_LIMIT_SERVICES");
    expect(await count("SELECT count(*) AS n FROM services WHERE tenant_id = ?", who.tenant.id)).toBe(3);
    // Full: one more is refused; after a delete there is room for exactly one again.
    expectError(await post(), 403, "BETA_LIMIT_SERVICES");
    const [first] = (await api("/v1/services", { key: who.key })).body.data;
    expect((await api(`/v1/services/${first.id}`, { key: who.key, method: "DELETE" })).status).toBe(200);
    expect(statuses(await Promise.all([post(), post(), post()]))).toEqual([201, 403, 403]);
    expect(await count("SELECT count(*) AS n FROM services WHERE tenant_id = ?", who.tenant.id)).toBe(3);
    // The cap is per tenant.
    const other = await actor();
    expect((await api("/v1/services", { key: other.key, method: "POST", body: serviceBody(), env: capped })).status).toBe(201);
  });

  it("services, default cap 50: with 47 held, 8 parallel creates → exactly 3 succeed; 50 stored", async () => {
    const who = await actor();
    await insertRows(
      "services",
      Array.from({ length: 47 }, () => serviceRow(who.tenant.id, newId("svc"))),
    );
    const results = await Promise.all(
      Array.from({ length: 8 }, () => api("/v1/services", { key: who.key, method: "POST", body: serviceBody() })),
    );
    expect(statuses(results)).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    expect(new Set(codes(results))).toEqual(new Set(["BETA_LIMIT_SERVICES"]));
    expect(await count("SELECT count(*) AS n FROM services WHERE tenant_id = ?", who.tenant.id)).toBe(50);
    expect((await api("/v1/services", { key: who.key })).body.meta.pagination.total).toBe(50);
  });

  it("paywalls, cap 4 via config: with 1 held, 8 parallel creates → exactly 3 succeed, 5 × 403 BETA_LIMIT_PAYWALLS", async () => {
    const who = await actor();
    const svc = await createService(who);
    const capped = { MAX_PAYWALLS_PER_TENANT: "4" };
    await createPaywall(who, routePaywallBody(svc.id));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api("/v1/paywalls", {
          key: who.key,
          method: "POST",
          body: i % 2 ? routePaywallBody(svc.id) : proxyPaywallBody(),
          env: capped,
        }),
      ),
    );
    expect(statuses(results)).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    for (const r of results.filter((r) => r.status === 403)) expectError(r, 403, "BETA_LIMIT_PAYWALLS");
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE tenant_id = ?", who.tenant.id)).toBe(4);
  });

  it("paywalls, default cap 500: with 497 held, 8 parallel creates → exactly 3 succeed; 500 stored", async () => {
    const who = await actor();
    await insertRows(
      "paywalls",
      Array.from({ length: 497 }, () => paywallRow(who.tenant, newId("pw"))),
    );
    const results = await Promise.all(
      Array.from({ length: 8 }, () => api("/v1/paywalls", { key: who.key, method: "POST", body: proxyPaywallBody() })),
    );
    expect(statuses(results)).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    expect(new Set(codes(results))).toEqual(new Set(["BETA_LIMIT_PAYWALLS"]));
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE tenant_id = ?", who.tenant.id)).toBe(500);
  });
});

describe("a service's mode change racing paywall writes", () => {
  /** Every paywall of the service has networks of the service's mode (the invariant of a mode change). */
  async function expectNoOrphans(serviceId: string) {
    const service = await env.DB.prepare("SELECT mode FROM services WHERE id = ?").bind(serviceId).first<{ mode: string }>();
    const { results } = await env.DB.prepare("SELECT networks FROM paywalls WHERE service_id = ?")
      .bind(serviceId)
      .all<{ networks: string }>();
    const allowed =
      service?.mode === "mainnet"
        ? ["base", "hyperevm", "tempo"]
        : ["arc-testnet", "base-sepolia", "hyperevm-testnet", "tempo-testnet"];
    for (const row of results)
      for (const n of JSON.parse(row.networks) as string[]) expect(allowed, `${n} under a ${service?.mode} service`).toContain(n);
    return { mode: service?.mode, paywalls: results.length };
  }
  const allowedOutcome = /^(200 |201 |400 VALIDATION_ERROR|409 CONFLICT)$/;

  it.each([0, 1, 3])(
    "mode change sent after %i of 6 paywall creates: no testnet paywall under a mainnet service, no 500",
    async (before) => {
      const outcomes = new Set<string>();
      for (let round = 0; round < 3; round++) {
        const who = await actor();
        const svc = await createService(who, { networks: ["base-sepolia"] });
        const create = () => api("/v1/paywalls", { key: who.key, method: "POST", body: routePaywallBody(svc.id) });
        const results = await Promise.all([
          ...Array.from({ length: before }, create),
          api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { mode: "mainnet", networks: ["base"] } }),
          ...Array.from({ length: 6 - before }, create),
        ]);
        for (const r of results) expect(`${r.status} ${r.body.code ?? ""}`, r.text).toMatch(allowedOutcome);
        const state = await expectNoOrphans(svc.id);
        outcomes.add(`${state.mode}:${state.paywalls}`);
      }
      expect(outcomes.size).toBeGreaterThan(0);
    },
  );

  it("exact order: a paywall create checks the old mode, the mode changes, then its write → refused 400", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia"] });
    const gated = gatedD1();
    const creating = api("/v1/paywalls", {
      key: who.key,
      method: "POST",
      body: routePaywallBody(svc.id),
      env: { DB: gated.db },
    });
    await gated.reached(1);
    const change = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { mode: "mainnet", networks: ["base"] },
    });
    expect(change.status, change.text).toBe(200);
    gated.release();
    expectInvalid(await creating, "networks.0");
    expect(await expectNoOrphans(svc.id)).toEqual({ mode: "mainnet", paywalls: 0 });
  });

  it("exact order: a paywall move checks the old mode, the mode changes, then its write → refused 400", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia"] });
    const home = await createService(who, { networks: ["base-sepolia"] });
    const pw = await createPaywall(who, routePaywallBody(home.id));
    const gated = gatedD1(/^update "paywalls"/);
    const moving = api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { serviceId: svc.id },
      env: { DB: gated.db },
    });
    await gated.reached(1);
    const change = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { mode: "mainnet", networks: ["base"] },
    });
    expect(change.status, change.text).toBe(200);
    gated.release();
    expectInvalid(await moving, "networks.0");
    expect((await storedPaywall(pw.id))?.serviceId).toBe(home.id);
    expect(await expectNoOrphans(svc.id)).toEqual({ mode: "mainnet", paywalls: 0 });
  });

  it("exact order: a mode change finds no paywall, one is created, then its write → refused 400 naming it", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia"] });
    const gated = gatedD1();
    const changing = api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { mode: "mainnet", networks: ["base"] },
      env: { DB: gated.db },
    });
    await gated.reached(1);
    const pw = await createPaywall(who, routePaywallBody(svc.id));
    gated.release();
    const res = await changing;
    expectError(res, 400, "VALIDATION_ERROR");
    expect(JSON.stringify(res.body.details)).toContain(pw.id);
    expect(await expectNoOrphans(svc.id)).toEqual({ mode: "testnet", paywalls: 1 });
  });

  it("paywalls moved into a service while it changes mode: none of the old mode stays", async () => {
    for (let round = 0; round < 3; round++) {
      const who = await actor();
      const svc = await createService(who, { networks: ["base-sepolia"] });
      const home = await createService(who, { networks: ["base-sepolia"] });
      const movers = await Promise.all(Array.from({ length: 4 }, () => createPaywall(who, routePaywallBody(home.id))));
      const results = await Promise.all([
        api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { mode: "mainnet", networks: ["base"] } }),
        ...movers.map((p) => api(`/v1/paywalls/${p.id}`, { key: who.key, method: "PATCH", body: { serviceId: svc.id } })),
      ]);
      for (const r of results) expect(`${r.status} ${r.body.code ?? ""}`, r.text).toMatch(allowedOutcome);
      await expectNoOrphans(svc.id);
      await expectNoOrphans(home.id);
    }
  });
});

describe("service delete", () => {
  it("removes the service's paywalls (404 after, rows gone) and leaves other paywalls alone", async () => {
    const who = await actor();
    const doomed = await createService(who);
    const kept = await createService(who);
    const gone = [
      await createPaywall(who, routePaywallBody(doomed.id)),
      await createPaywall(who, proxyPaywallBody({ serviceId: doomed.id })),
      await createPaywall(who, routePaywallBody(doomed.id, { headers: [{ key: "X-A", value: "v" }] })),
    ];
    const stay = [await createPaywall(who, routePaywallBody(kept.id)), await createPaywall(who, proxyPaywallBody())];

    const res = await api(`/v1/services/${doomed.id}`, { key: who.key, method: "DELETE" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ id: doomed.id, deleted: true });

    for (const p of gone) {
      expectError(await api(`/v1/paywalls/${p.id}`, { key: who.key }), 404, "NOT_FOUND");
      expect(await storedPaywall(p.id)).toBeUndefined();
    }
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", doomed.id)).toBe(0);
    for (const p of stay) expect((await api(`/v1/paywalls/${p.id}`, { key: who.key })).body.data).toEqual(p);
    const list = await api("/v1/paywalls", { key: who.key });
    expect(list.body.data.map((p: { id: string }) => p.id).sort()).toEqual(stay.map((p) => p.id).sort());
    expect((await api(`/v1/services/${kept.id}`, { key: who.key })).body.data.Paywall.map((p: { id: string }) => p.id)).toEqual([
      stay[0]?.id,
    ]);
  });

  it("exact order: a paywall create checks the service, the service is deleted, then its write → 400 INVALID_SERVICE", async () => {
    const who = await actor();
    const svc = await createService(who);
    const gated = gatedD1();
    const creating = api("/v1/paywalls", {
      key: who.key,
      method: "POST",
      body: routePaywallBody(svc.id),
      env: { DB: gated.db },
    });
    await gated.reached(1);
    expect((await api(`/v1/services/${svc.id}`, { key: who.key, method: "DELETE" })).status).toBe(200);
    gated.release();
    expectError(await creating, 400, "INVALID_SERVICE");
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", svc.id)).toBe(0);
  });

  it("a delete racing paywall creates leaves no paywall pointing at the deleted service", async () => {
    const who = await actor();
    const svc = await createService(who);
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => api("/v1/paywalls", { key: who.key, method: "POST", body: routePaywallBody(svc.id) })),
      api(`/v1/services/${svc.id}`, { key: who.key, method: "DELETE" }),
      ...Array.from({ length: 5 }, () => api("/v1/paywalls", { key: who.key, method: "POST", body: routePaywallBody(svc.id) })),
    ]);
    // Every create either won (before the delete) or is refused as naming no service: never a 500.
    for (const r of results) expect(`${r.status} ${r.body.code ?? ""}`).toMatch(/^(200 |201 |400 INVALID_SERVICE)$/);
    expect(results[5]?.status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", svc.id)).toBe(0);
  });
});
