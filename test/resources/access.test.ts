// Object-level (ownership, references) and function-level (scopes) authorization of the 10 routes.
import { beforeAll, describe, expect, it } from "vitest";
import type { Scope } from "../../src/core/keys/scopes.ts";
import { ALL_SCOPES, GRANTED_BY } from "../fixtures/spec.ts";
import { type ApiResult, api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import {
  type Actor,
  actor,
  createPaywall,
  createService,
  expectError,
  type Paywall,
  proxyPaywallBody,
  routePaywallBody,
  type Service,
  serviceBody,
  storedPaywall,
  storedService,
} from "../support/resources.ts";

describe("ownership: another tenant's resources", () => {
  let owner: Actor;
  let intruder: Actor;
  let svc: Service;
  let pw: Paywall;
  let svcBefore: Service;

  beforeAll(async () => {
    owner = await actor();
    intruder = await actor();
    svc = await createService(owner);
    pw = await createPaywall(owner, routePaywallBody(svc.id));
    svcBefore = (await api(`/v1/services/${svc.id}`, { key: owner.key })).body.data;
  });

  const unchanged = async () => {
    expect((await api(`/v1/services/${svc.id}`, { key: owner.key })).body.data).toEqual(svcBefore);
    expect((await api(`/v1/paywalls/${pw.id}`, { key: owner.key })).body.data).toEqual(pw);
  };

  it.each([
    ["GET", undefined],
    ["PATCH", { name: "hijacked" }],
    ["DELETE", undefined],
  ])("%s a service → 403 FORBIDDEN, nothing changed", async (method, body) => {
    expectError(await api(`/v1/services/${svc.id}`, { key: intruder.key, method, body }), 403, "FORBIDDEN");
    await unchanged();
  });

  it.each([
    ["GET", undefined],
    ["PATCH", { price: "1", enabled: false }],
    ["DELETE", undefined],
  ])("%s a paywall → 403 FORBIDDEN, nothing changed", async (method, body) => {
    expectError(await api(`/v1/paywalls/${pw.id}`, { key: intruder.key, method, body }), 403, "FORBIDDEN");
    await unchanged();
  });

  it("PATCH with a mode change or secret on another tenant's service → 403, nothing changed", async () => {
    const res = await api(`/v1/services/${svc.id}`, {
      key: intruder.key,
      method: "PATCH",
      body: { mode: "mainnet", networks: ["base"], authConfig: { bearerToken: "***" } },
    });
    expectError(res, 403, "FORBIDDEN");
    await unchanged();
  });

  it("a paywall pointing at another tenant's service → 400 INVALID_SERVICE on create", async () => {
    const res = await api("/v1/paywalls", { key: intruder.key, method: "POST", body: routePaywallBody(svc.id) });
    expectError(res, 400, "INVALID_SERVICE");
    const proxy = await api("/v1/paywalls", { key: intruder.key, method: "POST", body: proxyPaywallBody({ serviceId: svc.id }) });
    expectError(proxy, 400, "INVALID_SERVICE");
    await unchanged();
  });

  it("an unknown serviceId → 400 INVALID_SERVICE on create, its details naming the field", async () => {
    const res = await api("/v1/paywalls", {
      key: intruder.key,
      method: "POST",
      body: routePaywallBody("svc_000000000000000000000000"),
    });
    expectError(res, 400, "INVALID_SERVICE");
    expect(res.body.details).toEqual([{ path: "serviceId", message: "Not one of your services" }]);
  });

  it("moving one's own paywall to another tenant's (or an unknown) service → 400 INVALID_SERVICE", async () => {
    const own = await createPaywall(intruder, proxyPaywallBody());
    expectError(
      await api(`/v1/paywalls/${own.id}`, { key: intruder.key, method: "PATCH", body: { serviceId: svc.id } }),
      400,
      "INVALID_SERVICE",
    );
    expectError(
      await api(`/v1/paywalls/${own.id}`, {
        key: intruder.key,
        method: "PATCH",
        body: { serviceId: "svc_000000000000000000000000" },
      }),
      400,
      "INVALID_SERVICE",
    );
    expect((await storedPaywall(own.id))?.serviceId).toBeNull();
    await unchanged();
  });

  it("listing paywalls filtered by another tenant's serviceId → 403; an unknown one → 404", async () => {
    expectError(await api(`/v1/paywalls?serviceId=${svc.id}`, { key: intruder.key }), 403, "FORBIDDEN");
    expectError(await api("/v1/paywalls?serviceId=svc_000000000000000000000000", { key: intruder.key }), 404, "NOT_FOUND");
  });

  it("lists never show another tenant's rows", async () => {
    const mine = await createService(intruder);
    const myPw = await createPaywall(intruder, routePaywallBody(mine.id));
    const services = await api("/v1/services?limit=100", { key: intruder.key });
    expect(services.body.data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
    expect(services.body.meta.pagination.total).toBe(1);
    const paywalls = await api("/v1/paywalls?limit=100", { key: intruder.key });
    expect(paywalls.body.data.map((p: { id: string }) => p.id)).not.toContain(pw.id);
    expect(paywalls.body.data.map((p: { id: string }) => p.id)).toContain(myPw.id);
    for (const p of paywalls.body.data) expect(p.userId).toBe(intruder.tenant.id);
    // And the owner does not see the intruder's rows either.
    const ownerList = await api("/v1/services?limit=100", { key: owner.key });
    expect(ownerList.body.data.map((s: { id: string }) => s.id)).toEqual([svc.id]);
  });

  it("unknown ids → 404 NOT_FOUND on every id route", async () => {
    const who = owner.key;
    const s = "/v1/services/svc_000000000000000000000000";
    const p = "/v1/paywalls/pw_000000000000000000000000";
    expectError(await api(s, { key: who }), 404, "NOT_FOUND");
    expectError(await api(s, { key: who, method: "PATCH", body: { name: "x" } }), 404, "NOT_FOUND");
    expectError(await api(s, { key: who, method: "DELETE" }), 404, "NOT_FOUND");
    expectError(await api(p, { key: who }), 404, "NOT_FOUND");
    expectError(await api(p, { key: who, method: "PATCH", body: { name: "x" } }), 404, "NOT_FOUND");
    expectError(await api(p, { key: who, method: "DELETE" }), 404, "NOT_FOUND");
  });
});

interface Route {
  name: string;
  scope: Scope;
  run: (key: string, ids: { svc: string; pw: string }) => Promise<ApiResult>;
}

const ROUTES: Route[] = [
  {
    name: "POST /v1/services",
    scope: "services:write",
    run: (key) => api("/v1/services", { key, method: "POST", body: serviceBody() }),
  },
  { name: "GET /v1/services", scope: "services:read", run: (key) => api("/v1/services", { key }) },
  { name: "GET /v1/services/{id}", scope: "services:read", run: (key, ids) => api(`/v1/services/${ids.svc}`, { key }) },
  {
    name: "PATCH /v1/services/{id}",
    scope: "services:write",
    run: (key, ids) => api(`/v1/services/${ids.svc}`, { key, method: "PATCH", body: { name: "changed" } }),
  },
  {
    name: "DELETE /v1/services/{id}",
    scope: "services:write",
    run: (key, ids) => api(`/v1/services/${ids.svc}`, { key, method: "DELETE" }),
  },
  {
    name: "POST /v1/paywalls",
    scope: "paywalls:write",
    run: (key, ids) => api("/v1/paywalls", { key, method: "POST", body: routePaywallBody(ids.svc) }),
  },
  { name: "GET /v1/paywalls", scope: "paywalls:read", run: (key) => api("/v1/paywalls", { key }) },
  { name: "GET /v1/paywalls/{id}", scope: "paywalls:read", run: (key, ids) => api(`/v1/paywalls/${ids.pw}`, { key }) },
  {
    name: "PATCH /v1/paywalls/{id}",
    scope: "paywalls:write",
    run: (key, ids) => api(`/v1/paywalls/${ids.pw}`, { key, method: "PATCH", body: { price: "7" } }),
  },
  {
    name: "DELETE /v1/paywalls/{id}",
    scope: "paywalls:write",
    run: (key, ids) => api(`/v1/paywalls/${ids.pw}`, { key, method: "DELETE" }),
  },
];

/** Scopes that grant `scope` (the contract's table, test/fixtures/spec.ts). */
const grants = (scope: Scope): Scope[] => [...GRANTED_BY[scope]];

/** A tenant with a service and a paywall, and an all-scopes key to check nothing changed. */
async function world() {
  const owner = await actor();
  const svc = await createService(owner);
  const pw = await createPaywall(owner, routePaywallBody(svc.id));
  const counts = async () => ({
    services: (await api("/v1/services", { key: owner.key })).body.meta.pagination.total,
    paywalls: (await api("/v1/paywalls", { key: owner.key })).body.meta.pagination.total,
  });
  return { owner, ids: { svc: svc.id, pw: pw.id }, svc, pw, counts };
}

describe("scopes", () => {
  it.each(ROUTES)("$name without $scope → 403 INSUFFICIENT_SCOPE, nothing changed", async (route) => {
    const w = await world();
    const { key } = await createApiKey({
      tenant: w.owner.tenant,
      scopes: ALL_SCOPES.filter((s) => !grants(route.scope).includes(s)),
    });
    const before = await w.counts();
    const res = await route.run(key, w.ids);
    expectError(res, 403, "INSUFFICIENT_SCOPE");
    expect(res.body.error).toContain(route.scope);
    expect(await w.counts()).toEqual(before);
    expect(await storedService(w.svc.id)).toMatchObject({ name: w.svc.name, updatedAt: new Date(w.svc.updatedAt) });
    expect(await storedPaywall(w.pw.id)).toMatchObject({ price: w.pw.price, updatedAt: new Date(w.pw.updatedAt) });
  });

  it.each(ROUTES)("$name with only $scope → allowed (2xx)", async (route) => {
    const w = await world();
    const { key } = await createApiKey({ tenant: w.owner.tenant, scopes: [route.scope] });
    const res = await route.run(key, w.ids);
    expect(res.status, res.text).toBeLessThan(300);
  });

  it.each(ROUTES.filter((r) => r.scope.endsWith(":read")))(
    "$name is allowed with the write scope alone (write implies read)",
    async (route) => {
      const w = await world();
      const { key } = await createApiKey({ tenant: w.owner.tenant, scopes: [route.scope.replace(":read", ":write") as Scope] });
      const res = await route.run(key, w.ids);
      expect(res.status, res.text).toBe(200);
    },
  );

  it.each(ROUTES.filter((r) => r.scope.endsWith(":write")))(
    "$name is refused with the read scope alone (read does not imply write)",
    async (route) => {
      const w = await world();
      const { key } = await createApiKey({ tenant: w.owner.tenant, scopes: [route.scope.replace(":write", ":read") as Scope] });
      expectError(await route.run(key, w.ids), 403, "INSUFFICIENT_SCOPE");
    },
  );

  it.each([
    ["paywalls:*", ["paywalls:read", "paywalls:write"] as Scope[], "services"],
    ["services:*", ["services:read", "services:write"] as Scope[], "paywalls"],
  ])("a %s key cannot touch %s at all", async (_, scopes, other) => {
    const w = await world();
    const { key } = await createApiKey({ tenant: w.owner.tenant, scopes });
    for (const route of ROUTES.filter((r) => r.scope.startsWith(`${other}:`))) {
      expectError(await route.run(key, w.ids), 403, "INSUFFICIENT_SCOPE");
    }
  });

  it("a key with both write scopes still lacks transactions:read and events:read", async () => {
    const w = await world();
    const { key } = await createApiKey({ tenant: w.owner.tenant, scopes: ["services:write", "paywalls:write"] });
    expectError(await api("/v1/transactions", { key }), 403, "INSUFFICIENT_SCOPE");
    expectError(await api("/v1/events", { key }), 403, "INSUFFICIENT_SCOPE");
    expect((await api("/v1/paywalls", { key })).status).toBe(200);
  });

  it("authentication comes before the scope: a revoked key lacking the scope gets KEY_REVOKED, not INSUFFICIENT_SCOPE", async () => {
    const w = await world();
    const { key } = await createApiKey({ tenant: w.owner.tenant, scopes: ["events:read"], status: "revoked" });
    expectError(await api("/v1/services", { key, method: "POST", body: serviceBody() }), 401, "KEY_REVOKED");
    expectError(await api(`/v1/paywalls/${w.ids.pw}`, { key }), 401, "KEY_REVOKED");
    expect(await w.counts()).toEqual({ services: 1, paywalls: 1 });
  });

  it("the scope is checked before the body, the id and the owner", async () => {
    const w = await world();
    const stranger = await world();
    const { key } = await createApiKey({ tenant: w.owner.tenant, scopes: ["paywalls:read"] });
    // Invalid body: still 403, not 400.
    expectError(await api("/v1/services", { key, method: "POST", body: { name: "" } }), 403, "INSUFFICIENT_SCOPE");
    expectError(await api("/v1/services", { key, method: "POST", body: "{" }), 403, "INSUFFICIENT_SCOPE");
    // Unknown id: 403, not 404. Another tenant's id: INSUFFICIENT_SCOPE, not FORBIDDEN.
    expectError(await api("/v1/services/svc_000000000000000000000000", { key }), 403, "INSUFFICIENT_SCOPE");
    expectError(await api(`/v1/services/${stranger.ids.svc}`, { key }), 403, "INSUFFICIENT_SCOPE");
    expectError(await api(`/v1/paywalls/${stranger.ids.pw}`, { key, method: "DELETE" }), 403, "INSUFFICIENT_SCOPE");
  });
});
