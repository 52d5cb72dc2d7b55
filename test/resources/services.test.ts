import { beforeAll, describe, expect, it } from "vitest";
import { AUTH_METHODS, authFieldsOf } from "../fixtures/spec.ts";
import { api } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import {
  type Actor,
  actor,
  CANARY,
  createPaywall,
  createService,
  expectError,
  expectInvalid,
  ISO_DATE,
  proxyPaywallBody,
  routePaywallBody,
  serviceBody,
  storedService,
} from "../support/resources.ts";

const fullBody = () => ({
  name: "Weather API",
  baseUrl: "https://api.weather.example.com/base",
  authMethod: "custom-header",
  authConfig: { headerName: "X-Upstream-Key", headerValue: CANARY },
  networks: ["tempo-testnet", "base-sepolia"],
  mode: "testnet",
  description: "Forecasts and history",
  contactEmail: "ops@weather.example.com",
  categories: ["weather", "data"],
  docsHomepage: "https://weather.example.com",
  docsApiReference: "https://weather.example.com/reference",
  docsLlms: "https://weather.example.com/llms.txt",
  xGuidance: "Call /forecast with a city",
  publicRoutes: ["/health", "/status"],
  siwxRoutes: ["/me"],
});

describe("POST /v1/services", () => {
  it("201 with the exact service: every field, masked secret, clear names, no paywalls", async () => {
    const who = await actor();
    const res = await api("/v1/services", { key: who.key, method: "POST", body: fullBody() });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      data: {
        id: expect.stringMatching(/^svc_[0-9a-f]{24}$/),
        name: "Weather API",
        description: "Forecasts and history",
        baseUrl: "https://api.weather.example.com/base",
        authMethod: "custom-header",
        authConfig: { headerName: "X-Upstream-Key", headerValue: "***" },
        networks: ["tempo-testnet", "base-sepolia"],
        mode: "testnet",
        contactEmail: "ops@weather.example.com",
        categories: ["weather", "data"],
        docsHomepage: "https://weather.example.com/", // stored as its normalized href
        docsApiReference: "https://weather.example.com/reference",
        docsLlms: "https://weather.example.com/llms.txt",
        xGuidance: "Call /forecast with a city",
        publicRoutes: ["/health", "/status"],
        siwxRoutes: ["/me"],
        userId: who.tenant.id,
        createdAt: expect.stringMatching(ISO_DATE),
        updatedAt: expect.stringMatching(ISO_DATE),
        Paywall: [],
        // On the payment origin; the llms.txt is the tenant's own (docsLlms) when set (docs/discovery.md).
        discovery: {
          openapiUrl: expect.stringMatching(/^https:\/\/pay\.example\.com\/api\/discovery\/svc_[0-9a-f]{24}\/openapi\.json$/),
          llmsTxtUrl: "https://weather.example.com/llms.txt",
          mcpUrl: expect.stringMatching(/^https:\/\/pay\.example\.com\/api\/mcp\/svc_[0-9a-f]{24}$/),
        },
      },
      meta: { requestId: expect.stringMatching(/^req_/), timestamp: expect.stringMatching(ISO_DATE) },
    });
    expect(res.body.data.updatedAt).toBe(res.body.data.createdAt);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("optional fields default to null or empty lists", async () => {
    const who = await actor();
    const res = await api("/v1/services", {
      key: who.key,
      method: "POST",
      body: { name: "M", baseUrl: "https://m.example.com", authMethod: "none", networks: ["base"], mode: "mainnet" },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      name: "M",
      description: null,
      baseUrl: "https://m.example.com/",
      authMethod: "none",
      authConfig: {},
      networks: ["base"],
      mode: "mainnet",
      contactEmail: null,
      categories: [],
      docsHomepage: null,
      docsApiReference: null,
      docsLlms: null,
      xGuidance: null,
      publicRoutes: [],
      siwxRoutes: [],
      userId: who.tenant.id,
      createdAt: expect.stringMatching(ISO_DATE),
      updatedAt: expect.stringMatching(ISO_DATE),
      Paywall: [],
      discovery: {
        openapiUrl: `https://pay.example.com/api/discovery/${res.body.data.id}/openapi.json`,
        llmsTxtUrl: `https://pay.example.com/api/discovery/${res.body.data.id}/llms.txt`,
        mcpUrl: `https://pay.example.com/api/mcp/${res.body.data.id}`,
      },
    });
  });

  const METHODS: [string, Record<string, string>, Record<string, string>][] = [
    ["none", {}, {}],
    ["bearer", { bearerToken: CANARY }, { bearerToken: "***" }],
    ["token", { token: CANARY }, { token: "***" }],
    ["x-api-key", { apiKey: CANARY }, { apiKey: "***" }],
    ["custom-header", { headerName: "X-Key", headerValue: CANARY }, { headerName: "X-Key", headerValue: "***" }],
    ["query-param", { paramName: "api_key", paramValue: CANARY }, { paramName: "api_key", paramValue: "***" }],
    ["bearer-customer", {}, {}],
    ["x-api-key-secret", { apiKey: CANARY, apiSecret: `${CANARY}-2` }, { apiKey: "***", apiSecret: "***" }],
    ["json-body-field", { fieldName: "token", fieldValue: CANARY }, { fieldName: "token", fieldValue: "***" }],
  ];

  it.each(METHODS)(
    "authMethod %s: accepted with its fields, names in clear and secrets as ***",
    async (method, config, masked) => {
      const who = await actor();
      const res = await api("/v1/services", {
        key: who.key,
        method: "POST",
        body: serviceBody({ authMethod: method, authConfig: config }),
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.authMethod).toBe(method);
      expect(res.body.data.authConfig).toEqual(masked);
    },
  );

  it.each(["none", "bearer-customer"])("authMethod %s: authConfig may be omitted", async (method) => {
    const who = await actor();
    const { authConfig: _omit, ...body } = serviceBody({ authMethod: method });
    const res = await api("/v1/services", { key: who.key, method: "POST", body });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.authConfig).toEqual({});
  });

  it.each([
    ["testnet", ["arc-testnet", "base-sepolia", "hyperevm-testnet", "tempo-testnet"]],
    ["mainnet", ["base", "hyperevm", "tempo"]],
  ])("accepts every %s network", async (mode, networks) => {
    const who = await actor();
    const res = await api("/v1/services", { key: who.key, method: "POST", body: serviceBody({ mode, networks }) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.networks).toEqual(networks);
  });

  it("accepts the boundaries: name 100, contactEmail 320, 20 categories of 50, xGuidance 5000, 50 routes of 200", async () => {
    const who = await actor();
    const email = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.${"e".repeat(59)}.com`;
    expect(email).toHaveLength(320);
    const route = `/${"r".repeat(199)}`;
    const body = serviceBody({
      name: "n".repeat(100),
      contactEmail: email,
      categories: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(50, "c")),
      xGuidance: "x".repeat(5000),
      publicRoutes: Array.from({ length: 50 }, () => route),
      siwxRoutes: Array.from({ length: 50 }, () => "/"),
    });
    const res = await api("/v1/services", { key: who.key, method: "POST", body });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.name).toHaveLength(100);
    expect(res.body.data.contactEmail).toBe(email);
    expect(res.body.data.publicRoutes).toHaveLength(50);
  });
});

describe("POST /v1/services validation", () => {
  let who: Actor;
  beforeAll(async () => {
    who = await actor();
  });

  const post = (body: unknown) => api("/v1/services", { key: who.key, method: "POST", body });

  const CASES: [string, Record<string, unknown>, string][] = [
    ["empty name", { name: "" }, "name"],
    ["name of 101", { name: "n".repeat(101) }, "name"],
    ["name not a string", { name: 5 }, "name"],
    ["bad email", { contactEmail: "not-an-email" }, "contactEmail"],
    ["email without domain", { contactEmail: "a@" }, "contactEmail"],
    [
      "email over 320",
      {
        contactEmail: `${"a".repeat(64)}@${"b".repeat(60)}.${"c".repeat(60)}.${"d".repeat(60)}.${"e".repeat(60)}.${"f".repeat(10)}.com`,
      },
      "contactEmail",
    ],
    ["21 categories", { categories: Array.from({ length: 21 }, (_, i) => `c${i}`) }, "categories"],
    ["category of 51", { categories: ["ok", "c".repeat(51)] }, "categories.1"],
    ["empty category", { categories: [""] }, "categories.0"],
    ["xGuidance over 5000", { xGuidance: "x".repeat(5001) }, "xGuidance"],
    ["publicRoutes item without /", { publicRoutes: ["/ok", "health"] }, "publicRoutes.1"],
    ["siwxRoutes item without /", { siwxRoutes: ["me"] }, "siwxRoutes.0"],
    ["51 publicRoutes", { publicRoutes: Array.from({ length: 51 }, (_, i) => `/r${i}`) }, "publicRoutes"],
    ["51 siwxRoutes", { siwxRoutes: Array.from({ length: 51 }, (_, i) => `/r${i}`) }, "siwxRoutes"],
    ["publicRoutes item of 201", { publicRoutes: [`/${"r".repeat(200)}`] }, "publicRoutes.0"],
    ["siwxRoutes item of 201", { siwxRoutes: [`/${"r".repeat(200)}`] }, "siwxRoutes.0"],
    ["empty networks", { networks: [] }, "networks"],
    ["unknown network", { networks: ["ethereum"] }, "networks.0"],
    ["duplicate network", { networks: ["base-sepolia", "base-sepolia"] }, "networks"],
    ["mainnet network on testnet", { networks: ["base-sepolia", "base"] }, "networks.1"],
    ["testnet network on mainnet", { mode: "mainnet", networks: ["tempo-testnet"] }, "networks.0"],
    ["unknown mode", { mode: "devnet" }, "mode"],
    ["unknown authMethod", { authMethod: "basic" }, "authMethod"],
    ["baseUrl not a URL", { baseUrl: "not a url" }, "baseUrl"],
    ["relative baseUrl", { baseUrl: "/api" }, "baseUrl"],
    ["authConfig value not a string", { authConfig: { bearerToken: 5 } }, "authConfig.bearerToken"],
    ["authConfig empty value", { authConfig: { bearerToken: "" } }, "authConfig.bearerToken"],
    ["unknown top-level field", { colour: "blue" }, "colour"],
    ["mass assignment: userId", { userId: "ten_someoneelse00000000000" }, "userId"],
    ["mass assignment: id", { id: "svc_chosenbyclient000000000" }, "id"],
    ["mass assignment: Paywall", { Paywall: [] }, "Paywall"],
    ["mass assignment: createdAt", { createdAt: "2020-01-01T00:00:00.000Z" }, "createdAt"],
  ];

  it.each(CASES)("%s → 400 naming the field", async (_, overrides, path) => {
    expectInvalid(await post(serviceBody(overrides)), path);
  });

  it.each(["name", "baseUrl", "authMethod", "networks", "mode"])("missing %s → 400 naming it", async (field) => {
    const body: Record<string, unknown> = serviceBody();
    delete body[field];
    expectInvalid(await post(body), field);
  });

  /** The fields each method requires (the contract's field table; methods without fields are left out). */
  const REQUIRED: Record<string, string[]> = Object.fromEntries(
    AUTH_METHODS.map((method) => [method, authFieldsOf(method)] as const).filter(([, fields]) => fields.length > 0),
  );
  const fullConfig = (method: string) => Object.fromEntries((REQUIRED[method] ?? []).map((f) => [f, `${f}-value`]));

  const missing = Object.entries(REQUIRED).flatMap(([method, fields]) => fields.map((field) => [method, field] as const));
  it.each(missing)("authMethod %s without %s → 400 authConfig.<field>", async (method, field) => {
    const config = fullConfig(method);
    delete config[field];
    expectInvalid(await post(serviceBody({ authMethod: method, authConfig: config })), `authConfig.${field}`, /required/i);
  });

  it.each(Object.keys(REQUIRED))("authMethod %s without any authConfig → 400", async (method) => {
    const { authConfig: _omit, ...body } = serviceBody({ authMethod: method });
    expectInvalid(await post(body), `authConfig.${REQUIRED[method]?.[0]}`);
  });

  const ALL_METHODS = ["none", "bearer-customer", ...Object.keys(REQUIRED)];
  it.each(ALL_METHODS)("authMethod %s with an unknown field → 400 authConfig.<unknown>", async (method) => {
    expectInvalid(
      await post(serviceBody({ authMethod: method, authConfig: { ...fullConfig(method), extra: "x" } })),
      "authConfig.extra",
    );
  });

  it("a field of another method is unknown (bearer with apiKey)", async () => {
    expectInvalid(
      await post(serviceBody({ authMethod: "bearer", authConfig: { bearerToken: "t", apiKey: "k" } })),
      "authConfig.apiKey",
    );
  });

  it.each(Object.keys(REQUIRED))("authMethod %s with *** on create → 400 (nothing stored to keep)", async (method) => {
    const secret = REQUIRED[method]?.at(-1) as string;
    expectInvalid(
      await post(serviceBody({ authMethod: method, authConfig: { ...fullConfig(method), [secret]: "***" } })),
      `authConfig.${secret}`,
    );
  });

  it("several problems → one detail each", async () => {
    const res = await post(serviceBody({ name: "", networks: [], colour: 1 }));
    expectInvalid(res, "name");
    expectInvalid(res, "networks");
    expectInvalid(res, "colour");
  });

  it("malformed JSON → 400 VALIDATION_ERROR", async () => {
    expectError(await post('{"name": "x",'), 400, "VALIDATION_ERROR");
  });

  it.each([
    ["an array", "[]"],
    ["a string", '"service"'],
    ["null", "null"],
    ["a number", "42"],
  ])("a JSON body that is %s → 400 VALIDATION_ERROR", async (_, text) => {
    const res = await post(text);
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.details).toEqual([{ path: "", message: expect.any(String) }]);
  });

  it("a non-JSON content type → 415 VALIDATION_ERROR, nothing created", async () => {
    const res = await api("/v1/services", {
      key: who.key,
      method: "POST",
      body: JSON.stringify(serviceBody()),
      headers: { "content-type": "text/plain" },
    });
    expectError(res, 415, "VALIDATION_ERROR");
    const form = await api("/v1/services", {
      key: who.key,
      method: "POST",
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectError(form, 415, "VALIDATION_ERROR");
    const list = await api("/v1/services", { key: who.key });
    expect(list.body.meta.pagination.total).toBe(0);
  });

  it("no service was created by any refused request", async () => {
    const list = await api("/v1/services", { key: who.key });
    expect(list.body.meta.pagination.total).toBe(0);
  });
});

describe("GET /v1/services/{id}", () => {
  it("200 with the service as created, and its paywalls embedded newest first", async () => {
    const who = await actor();
    const created = await createService(who);
    const first = await createPaywall(who, routePaywallBody(created.id));
    const second = await createPaywall(who, proxyPaywallBody({ serviceId: created.id }));
    const res = await api(`/v1/services/${created.id}`, { key: who.key });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      data: { ...created, Paywall: [second, first] },
      meta: { requestId: expect.any(String), timestamp: expect.stringMatching(ISO_DATE) },
    });
  });

  it("unknown id → 404 NOT_FOUND", async () => {
    const who = await actor();
    expectError(await api("/v1/services/svc_000000000000000000000000", { key: who.key }), 404, "NOT_FOUND");
  });
});

describe("PATCH /v1/services/{id}", () => {
  it("only the sent fields change; createdAt stays, updatedAt moves", async () => {
    const clock = useTestClock();
    const who = await actor();
    const before = await createService(who, fullBody());
    clock.advance(1000);
    const res = await api(`/v1/services/${before.id}`, { key: who.key, method: "PATCH", body: { name: "Renamed" } });
    expect(res.status, res.text).toBe(200);
    const { updatedAt, ...rest } = res.body.data;
    const { updatedAt: oldUpdatedAt, ...oldRest } = before;
    expect(rest).toEqual({ ...oldRest, name: "Renamed" });
    expect(Date.parse(updatedAt)).toBe(Date.parse(oldUpdatedAt) + 1000);
    expect(res.body.data.createdAt).toBe(before.createdAt);
    // And it was stored: a later read agrees.
    const read = await api(`/v1/services/${before.id}`, { key: who.key });
    expect(read.body.data).toEqual(res.body.data);
  });

  it("an empty body changes nothing but updatedAt", async () => {
    const who = await actor();
    const before = await createService(who, fullBody());
    const res = await api(`/v1/services/${before.id}`, { key: who.key, method: "PATCH", body: {} });
    expect(res.status, res.text).toBe(200);
    expect({ ...res.body.data, updatedAt: before.updatedAt }).toEqual(before);
  });

  it("every accepted field can be changed at once", async () => {
    const who = await actor();
    const before = await createService(who, fullBody());
    const patch = {
      name: "New",
      description: null,
      baseUrl: "https://new.example.org/",
      authMethod: "query-param",
      authConfig: { paramName: "key", paramValue: CANARY },
      networks: ["base"],
      mode: "mainnet",
      contactEmail: null,
      categories: [],
      docsHomepage: "https://docs.example.org/",
      docsApiReference: null,
      docsLlms: null,
      xGuidance: null,
      publicRoutes: ["/p"],
      siwxRoutes: [],
    };
    const res = await api(`/v1/services/${before.id}`, { key: who.key, method: "PATCH", body: patch });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      ...before,
      ...patch,
      authConfig: { paramName: "key", paramValue: "***" },
      updatedAt: expect.stringMatching(ISO_DATE),
      // Without docsLlms, the generated llms.txt.
      discovery: { ...before.discovery, llmsTxtUrl: `https://pay.example.com/api/discovery/${before.id}/llms.txt` },
    });
  });

  it.each([
    ["empty name", { name: "" }, "name"],
    ["name of 101", { name: "n".repeat(101) }, "name"],
    ["bad email", { contactEmail: "nope" }, "contactEmail"],
    ["empty networks", { networks: [] }, "networks"],
    ["unknown network", { networks: ["solana"] }, "networks.0"],
    ["networks of the other mode", { networks: ["base"] }, "networks.0"],
    ["category of 51", { categories: ["c".repeat(51)] }, "categories.0"],
    ["route without /", { publicRoutes: ["x"] }, "publicRoutes.0"],
    ["xGuidance over 5000", { xGuidance: "x".repeat(5001) }, "xGuidance"],
    ["unknown field", { colour: "red" }, "colour"],
    ["userId", { userId: "ten_x" }, "userId"],
    ["id", { id: "svc_x" }, "id"],
    ["Paywall", { Paywall: [] }, "Paywall"],
  ])("%s → 400 naming the field, nothing changed", async (_, patch, path) => {
    const who = await actor();
    const before = await createService(who);
    expectInvalid(await api(`/v1/services/${before.id}`, { key: who.key, method: "PATCH", body: patch }), path);
    expect((await api(`/v1/services/${before.id}`, { key: who.key })).body.data).toEqual(before);
  });

  it("changing mode without networks of the new mode → 400; with them → 200", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia"] });
    expectInvalid(
      await api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { mode: "mainnet" } }),
      "networks.0",
    );
    expect((await storedService(svc.id))?.mode).toBe("testnet");
    const ok = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { mode: "mainnet", networks: ["tempo", "base"] },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data).toMatchObject({ mode: "mainnet", networks: ["tempo", "base"] });
  });

  it("a mode change that would orphan a paywall → 400 naming that paywall; nothing changes", async () => {
    const who = await actor();
    const svc = await createService(who, { networks: ["base-sepolia"] });
    const orphan = await createPaywall(who, routePaywallBody(svc.id, { slug: "orphan-me" }));
    const res = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { mode: "mainnet", networks: ["base"] },
    });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(JSON.stringify(res.body.details)).toContain(orphan.id);
    const stored = await storedService(svc.id);
    expect(stored).toMatchObject({ mode: "testnet", networks: ["base-sepolia"] });
    // Once the paywall is gone, the same change is accepted.
    expect((await api(`/v1/paywalls/${orphan.id}`, { key: who.key, method: "DELETE" })).status).toBe(200);
    const ok = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { mode: "mainnet", networks: ["base"] },
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it("*** keeps the stored secret (same ciphertext); a new value replaces it", async () => {
    const who = await actor();
    const svc = await createService(who, {
      authMethod: "x-api-key-secret",
      authConfig: { apiKey: CANARY, apiSecret: `${CANARY}-s` },
    });
    const stored = (await storedService(svc.id))?.authConfig;
    expect(stored?.apiKey).toMatch(/^v1\./);

    const keep = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { authConfig: { apiKey: "***", apiSecret: "***" }, name: "still here" },
    });
    expect(keep.status, keep.text).toBe(200);
    expect(keep.body.data.authConfig).toEqual({ apiKey: "***", apiSecret: "***" });
    expect((await storedService(svc.id))?.authConfig).toEqual(stored);

    const partial = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { authConfig: { apiKey: "***", apiSecret: `${CANARY}-rotated` } },
    });
    expect(partial.status, partial.text).toBe(200);
    const after = (await storedService(svc.id))?.authConfig;
    expect(after?.apiKey).toBe(stored?.apiKey);
    expect(after?.apiSecret).not.toBe(stored?.apiSecret);
    expect(after?.apiSecret).toMatch(/^v1\./);
  });

  it("a name field cannot be kept with ***, but can change while the secret is kept", async () => {
    const who = await actor();
    const svc = await createService(who, { authMethod: "custom-header", authConfig: { headerName: "X-A", headerValue: CANARY } });
    const stored = (await storedService(svc.id))?.authConfig;
    expectInvalid(
      await api(`/v1/services/${svc.id}`, {
        key: who.key,
        method: "PATCH",
        body: { authConfig: { headerName: "***", headerValue: "***" } },
      }),
      "authConfig.headerName",
    );
    const res = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { authConfig: { headerName: "X-B", headerValue: "***" } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.authConfig).toEqual({ headerName: "X-B", headerValue: "***" });
    expect((await storedService(svc.id))?.authConfig).toEqual({ headerName: "X-B", headerValue: stored?.headerValue });
  });

  it("an authConfig patch is validated against the method: missing or unknown fields → 400", async () => {
    const who = await actor();
    const svc = await createService(who, { authMethod: "x-api-key-secret", authConfig: { apiKey: CANARY, apiSecret: CANARY } });
    expectInvalid(
      await api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { authConfig: { apiKey: "***" } } }),
      "authConfig.apiSecret",
    );
    expectInvalid(
      await api(`/v1/services/${svc.id}`, {
        key: who.key,
        method: "PATCH",
        body: { authConfig: { apiKey: "***", apiSecret: "***", x: "y" } },
      }),
      "authConfig.x",
    );
  });

  it("an authMethod change requires the new method's fields", async () => {
    const who = await actor();
    const svc = await createService(who, { authMethod: "bearer", authConfig: { bearerToken: CANARY } });
    expectInvalid(
      await api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { authMethod: "x-api-key" } }),
      "authConfig.apiKey",
    );
    // "***" cannot borrow another field's secret.
    expectInvalid(
      await api(`/v1/services/${svc.id}`, {
        key: who.key,
        method: "PATCH",
        body: { authMethod: "x-api-key", authConfig: { apiKey: "***" } },
      }),
      "authConfig.apiKey",
    );
    expectInvalid(
      await api(`/v1/services/${svc.id}`, {
        key: who.key,
        method: "PATCH",
        body: { authMethod: "x-api-key", authConfig: { apiKey: "k", bearerToken: "***" } },
      }),
      "authConfig.bearerToken",
    );
    expect((await storedService(svc.id))?.authMethod).toBe("bearer");

    const ok = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { authMethod: "x-api-key", authConfig: { apiKey: CANARY } },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data).toMatchObject({ authMethod: "x-api-key", authConfig: { apiKey: "***" } });
    const stored = await storedService(svc.id);
    expect(Object.keys(stored?.authConfig ?? {})).toEqual(["apiKey"]);

    const none = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { authMethod: "none", authConfig: {} },
    });
    expect(none.status, none.text).toBe(200);
    expect(none.body.data).toMatchObject({ authMethod: "none", authConfig: {} });
    expect((await storedService(svc.id))?.authConfig).toEqual({});
  });

  it("unknown id → 404 NOT_FOUND", async () => {
    const who = await actor();
    expectError(
      await api("/v1/services/svc_000000000000000000000000", { key: who.key, method: "PATCH", body: { name: "x" } }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("DELETE /v1/services/{id}", () => {
  it("200 {id, deleted: true}; then 404 on GET, PATCH and DELETE", async () => {
    const who = await actor();
    const svc = await createService(who);
    const res = await api(`/v1/services/${svc.id}`, { key: who.key, method: "DELETE" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      data: { id: svc.id, deleted: true },
      meta: { requestId: expect.any(String), timestamp: expect.any(String) },
    });
    expectError(await api(`/v1/services/${svc.id}`, { key: who.key }), 404, "NOT_FOUND");
    expectError(await api(`/v1/services/${svc.id}`, { key: who.key, method: "PATCH", body: { name: "x" } }), 404, "NOT_FOUND");
    expectError(await api(`/v1/services/${svc.id}`, { key: who.key, method: "DELETE" }), 404, "NOT_FOUND");
    expect(await storedService(svc.id)).toBeUndefined();
  });
});
