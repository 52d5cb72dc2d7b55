// Secret canaries: a unique canary in every secret field (each secret authConfig field of the nine auth methods,
// paywall header values) and every raw key, through create, get, list, patch, delete and error paths. The scan
// of test/support/canary-scan.ts (imported here too, so this file scans even where the setup file is not
// configured) fails the file if any canary, raw key, key hash or ciphertext reached a response or a log line.
// The first block proves the scanner itself finds what it must and names secrets only by label.
import "../support/canary-scan.ts";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { generateApiKey } from "../../src/core/keys/api-key.ts";
import { AUTH_FIELDS, AUTH_METHODS, type SpecAuthMethod as AuthMethod } from "../fixtures/spec.ts";
import { canaries, canary, describeLeaks, harvestStoredSecrets, LeakScanner, registerApiKey } from "../support/canaries.ts";
import { type ApiResult, type CallOptions, api as callWorker } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import { createApiKey } from "../support/factories.ts";

const MASK = "***";

/** Every canary this file put anywhere. */
const planted: string[] = [];
const plant = (label: string) => {
  const value = canary(label);
  planted.push(value);
  return value;
};

/** Calls the Worker and checks, besides the suite-wide scan, that no planted canary came back in this answer. */
async function api(path: string, options: CallOptions = {}): Promise<ApiResult> {
  const res = await callWorker(path, options);
  const { text } = res;
  const headerText = [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
  for (const value of planted) {
    expect(text.includes(value), `${options.method ?? "GET"} ${path} → ${res.status} echoes a canary`).toBe(false);
    expect(headerText.includes(value), `${options.method ?? "GET"} ${path} → ${res.status} echoes a canary in a header`).toBe(
      false,
    );
  }
  return res;
}

/** authConfig for a method: every secret field a fresh canary, every name field a plain name. */
function authConfigFor(method: AuthMethod, label: string): Record<string, string> {
  const spec = AUTH_FIELDS[method];
  return Object.fromEntries([
    ...spec.names.map((name) => [name, `X-Plain-${name}`]),
    ...spec.secrets.map((field) => [field, plant(`${method} authConfig.${field} (${label})`)]),
  ]);
}

const maskedConfig = (method: AuthMethod) =>
  Object.fromEntries([
    ...AUTH_FIELDS[method].names.map((name) => [name, `X-Plain-${name}`]),
    ...AUTH_FIELDS[method].secrets.map((field) => [field, MASK]),
  ]);

const serviceBody = (method: AuthMethod, label: string, overrides: Record<string, unknown> = {}) => ({
  name: `Canary ${method}`,
  baseUrl: "https://api.example.com",
  authMethod: method,
  authConfig: authConfigFor(method, label),
  networks: ["base-sepolia", "tempo-testnet"],
  mode: "testnet",
  ...overrides,
});

let owner: { key: string; tenantId: string };
let intruder: string;
let readOnly: string;

beforeAll(async () => {
  const made = await createApiKey({ name: "canary owner" });
  owner = { key: made.key, tenantId: made.tenant.id };
  intruder = (await createApiKey({ name: "canary intruder" })).key;
  readOnly = (await createApiKey({ tenant: made.tenant, scopes: ["services:read", "paywalls:read"], name: "canary read-only" }))
    .key;
});

describe("the scanner", () => {
  it("finds a canary, a raw key, a key hash, a ciphertext and the two secret shapes, and names them only by label", async () => {
    const scanner = new LeakScanner();
    const secret = scanner.register("canary", "authConfig.bearerToken of the self-test", "cnry0123456789abcdef01234567");
    const { key, keyHash } = await generateApiKey();
    scanner.register("raw API key", "self-test key", key.slice(12));
    scanner.register("API key hash", "self-test key", keyHash);
    scanner.register("ciphertext", "self-test ciphertext", "v1.k1.AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBB");

    scanner.observe("response body", "POST /v1/services → 201", `{"authConfig":{"bearerToken":"${secret}"}}`);
    scanner.observe("response header", "header x-debug of GET /v1/me → 200", key);
    scanner.observe("console", "console.log", `lookup by hash ${keyHash}`);
    scanner.observe("console", "console.error", "stored v1.k1.AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBB");
    scanner.observe("console", "console.error", `other key mpk_${"a".repeat(64)}`);
    scanner.observe("response body", "GET /v1/paywalls → 200", '{"value":"v1.k2.CCCCCCCCCCCCCCCC.DDDDDDDDDDDDDDDDDDDDDDDDDD"}');
    scanner.observe("response body", "GET /v1/me → 200", `{"keyPrefix":"${key.slice(0, 12)}","value":"***"}`);
    const res = new Response(`{"leak":"${secret}"}`, { headers: { "x-token": keyHash } });
    scanner.observeResponse(res, "GET /v1/x");
    await scanner.flush();

    const leaks = scanner.findLeaks();
    expect(leaks.map((l) => [l.kind, l.label, l.source])).toEqual([
      ["canary", "authConfig.bearerToken of the self-test", "response body"],
      ["raw API key", "self-test key", "response header"],
      ["API key hash", "self-test key", "console"],
      ["ciphertext", "self-test ciphertext", "console"],
      ["raw API key (shape)", "unregistered", "console"],
      ["ciphertext (shape)", "unregistered", "response body"],
      ["API key hash", "self-test key", "response header"],
      ["canary", "authConfig.bearerToken of the self-test", "response body"],
    ]);
    const report = describeLeaks("test/x.test.ts", leaks);
    expect(report).toContain("Secret leak in test/x.test.ts");
    expect(report).toContain("authConfig.bearerToken of the self-test");
    for (const value of [
      secret,
      key,
      key.slice(12),
      keyHash,
      "BBBBBBBBBBBBBBBBBBBBBBBBBBBB",
      "DDDDDDDDDDDDDDDDDDDDDDDDDD",
      "a".repeat(64),
    ]) {
      expect(report.includes(value), "the report must not carry a secret").toBe(false);
    }
  });

  it("registers the raw keys the factories make, canaries, and what D1 stores encrypted", async () => {
    const before = canaries.counts();
    await createApiKey();
    plant("self-test");
    await harvestStoredSecrets();
    const after = canaries.counts();
    expect(after["raw API key"]).toBe((before["raw API key"] ?? 0) + 1);
    expect(after.canary).toBe((before.canary ?? 0) + 1);
    expect(after["encryption key"]).toBeGreaterThan(0);
  });
});

describe("a canary in every secret authConfig field of every auth method", () => {
  it.each(AUTH_METHODS.map((m) => [m]))("%s: create, get, list, patch (new values and ***), delete", async (method) => {
    const created = await api("/v1/services", { key: owner.key, method: "POST", body: serviceBody(method, "create") });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id as string;
    expect(created.body.data.authConfig).toEqual(maskedConfig(method));

    // Stored encrypted: no canary in the row.
    const row = await env.DB.prepare("SELECT * FROM services WHERE id = ?").bind(id).first();
    for (const value of planted) expect(JSON.stringify(row).includes(value)).toBe(false);
    for (const field of AUTH_FIELDS[method].secrets) {
      expect(JSON.parse(row?.auth_config as string)[field]).toMatch(/^v1\./);
    }

    const got = await api(`/v1/services/${id}`, { key: owner.key });
    expect(got.body.data.authConfig).toEqual(maskedConfig(method));
    const listed = await api("/v1/services?limit=100", { key: owner.key });
    expect(listed.body.data.find((s: { id: string }) => s.id === id)?.authConfig).toEqual(maskedConfig(method));
    const byReader = await api(`/v1/services/${id}`, { key: readOnly });
    expect(byReader.body.data.authConfig).toEqual(maskedConfig(method));

    const patched = await api(`/v1/services/${id}`, {
      key: owner.key,
      method: "PATCH",
      body: { authConfig: authConfigFor(method, "patch") },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.authConfig).toEqual(maskedConfig(method));
    const kept = await api(`/v1/services/${id}`, {
      key: owner.key,
      method: "PATCH",
      body: { authConfig: maskedConfig(method), name: "kept" },
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.data.authConfig).toEqual(maskedConfig(method));

    await harvestStoredSecrets(); // the ciphertexts of this row, before it goes
    const deleted = await api(`/v1/services/${id}`, { key: owner.key, method: "DELETE" });
    expect(deleted.body.data).toEqual({ id, deleted: true });
  });

  it("changing the auth method carries fresh canaries and keeps every value masked", async () => {
    const created = await api("/v1/services", {
      key: owner.key,
      method: "POST",
      body: serviceBody("x-api-key", "before switch"),
    });
    const id = created.body.data.id as string;
    const switched = await api(`/v1/services/${id}`, {
      key: owner.key,
      method: "PATCH",
      body: {
        authMethod: "x-api-key-secret",
        authConfig: { apiKey: MASK, apiSecret: plant("x-api-key-secret apiSecret (switch)") },
      },
    });
    expect(switched.status, switched.text).toBe(200);
    expect(switched.body.data.authConfig).toEqual({ apiKey: MASK, apiSecret: MASK });
  });
});

describe("a canary in every paywall header value", () => {
  it("create, get, list, the service's embedded list, patch (replace and ***), delete", async () => {
    const service = await api("/v1/services", { key: owner.key, method: "POST", body: serviceBody("bearer", "paywall parent") });
    const serviceId = service.body.data.id as string;
    // Authorization is a reserved header name (src/lib/header-rules.ts); Cookie may be set.
    const headers = ["X-Upstream-Token", "X-Tenant-Secret", "Cookie"].map((key) => ({
      key,
      value: plant(`paywall header ${key}`),
    }));
    const created = await api("/v1/paywalls", {
      key: owner.key,
      method: "POST",
      body: {
        slug: `canary-${Date.now().toString(36)}`,
        name: "Canary paywall",
        targetType: "ROUTE",
        targetRoute: "/paid",
        serviceId,
        price: "1000",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
        headers,
      },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id as string;
    const masked = headers.map(({ key }) => ({ key, value: MASK }));
    expect(created.body.data.headers).toEqual(masked);

    const row = await env.DB.prepare("SELECT headers FROM paywalls WHERE id = ?").bind(id).first<{ headers: string }>();
    for (const value of planted) expect(row?.headers.includes(value)).toBe(false);

    expect((await api(`/v1/paywalls/${id}`, { key: owner.key })).body.data.headers).toEqual(masked);
    expect((await api(`/v1/paywalls/${id}`, { key: readOnly })).body.data.headers).toEqual(masked);
    const list = await api(`/v1/paywalls?serviceId=${serviceId}`, { key: owner.key });
    expect(list.body.data.map((p: { headers: unknown }) => p.headers)).toEqual([masked]);
    const embedded = await api(`/v1/services/${serviceId}`, { key: owner.key });
    expect(embedded.body.data.Paywall.map((p: { headers: unknown }) => p.headers)).toEqual([masked]);

    const patched = await api(`/v1/paywalls/${id}`, {
      key: owner.key,
      method: "PATCH",
      body: {
        headers: [
          { key: "X-Upstream-Token", value: MASK },
          { key: "X-New", value: plant("paywall header X-New (patch)") },
        ],
      },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.headers).toEqual([
      { key: "X-Upstream-Token", value: MASK },
      { key: "X-New", value: MASK },
    ]);

    await harvestStoredSecrets();
    expect((await api(`/v1/services/${serviceId}`, { key: owner.key, method: "DELETE" })).status).toBe(200);
    expect((await api(`/v1/paywalls/${id}`, { key: owner.key })).status).toBe(404);
  });
});

describe("error answers never echo a secret", () => {
  const errorCases: [string, number, string, () => { path: string; options: CallOptions }][] = [
    [
      "a validation error elsewhere in a body carrying secrets",
      400,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/services",
        options: { method: "POST", body: serviceBody("x-api-key-secret", "bad name", { name: "" }) },
      }),
    ],
    [
      "a secret under a field the method does not take",
      400,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/services",
        options: {
          method: "POST",
          body: serviceBody("bearer", "unknown field", {
            authConfig: {
              bearerToken: plant("bearer authConfig.bearerToken (beside an unknown field)"),
              token: plant("bearer authConfig.token (a field bearer does not take)"),
            },
          }),
        },
      }),
    ],
    [
      "a secret longer than allowed",
      400,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/services",
        options: {
          method: "POST",
          body: serviceBody("token", "too long", {
            authConfig: { token: `${plant("token authConfig.token (over 4096 characters)")}${"x".repeat(4100)}` },
          }),
        },
      }),
    ],
    [
      "authConfig as a string instead of an object",
      400,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/services",
        options: {
          method: "POST",
          body: serviceBody("bearer", "wrong type", { authConfig: plant("authConfig sent as a string") }),
        },
      }),
    ],
    [
      "a secret beside a blocked upstream (SSRF)",
      400,
      "SSRF_BLOCKED",
      () => ({
        path: "/v1/services",
        options: { method: "POST", body: serviceBody("custom-header", "ssrf", { baseUrl: "http://169.254.169.254/" }) },
      }),
    ],
    [
      "malformed JSON cut off inside a secret",
      400,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/services",
        options: { method: "POST", body: `{"name":"x","authConfig":{"bearerToken":"${plant("bearerToken in malformed JSON")}` },
      }),
    ],
    [
      "a body over the size limit made of secrets",
      413,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/services",
        options: {
          method: "POST",
          body: JSON.stringify({ authConfig: { bearerToken: plant("bearerToken in a body over 100 KiB").repeat(4000) } }),
        },
      }),
    ],
    [
      "a header value over 1000 characters",
      400,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/paywalls",
        options: {
          method: "POST",
          body: {
            slug: "too-long-header",
            name: "x",
            targetType: "PROXY",
            targetUrl: "https://api.example.com/x",
            price: "1",
            currency: "USDC",
            networks: ["base-sepolia"],
            fulfillmentMode: "PROXY",
            headers: [{ key: "X-Long", value: `${plant("paywall header value over 1000 characters")}${"y".repeat(1000)}` }],
          },
        },
      }),
    ],
    [
      "a header with an invalid key and a secret value",
      400,
      "VALIDATION_ERROR",
      () => ({
        path: "/v1/paywalls",
        options: {
          method: "POST",
          body: {
            slug: "bad-header-key",
            name: "x",
            targetType: "PROXY",
            targetUrl: "https://api.example.com/x",
            price: "1",
            currency: "USDC",
            networks: ["base-sepolia"],
            fulfillmentMode: "PROXY",
            headers: [{ key: "bad key!", value: plant("paywall header value under an invalid key") }],
          },
        },
      }),
    ],
  ];

  it.each(errorCases)("%s → %i %s, no canary in the answer", async (_name, status, code, build) => {
    const { path, options } = build();
    const res = await api(path, { key: owner.key, ...options });
    expect(res.status, res.text).toBe(status);
    expect(res.body?.code).toBe(code);
  });

  it("a PATCH with secrets on another tenant's service or without the scope → 403, no canary", async () => {
    const created = await api("/v1/services", {
      key: owner.key,
      method: "POST",
      body: serviceBody("query-param", "refused patch"),
    });
    const id = created.body.data.id as string;
    const body = { authConfig: authConfigFor("query-param", "refused patch") };
    expect((await api(`/v1/services/${id}`, { key: intruder, method: "PATCH", body })).body.code).toBe("FORBIDDEN");
    expect((await api(`/v1/services/${id}`, { key: readOnly, method: "PATCH", body })).body.code).toBe("INSUFFICIENT_SCOPE");
  });

  it("a raw key is never echoed: unknown, revoked, conflicting, or sent in the query string", async () => {
    const stray = await generateApiKey();
    registerApiKey("a well-formed key nobody holds", stray.key, stray.keyHash);
    const revoked = await createApiKey({ status: "revoked", name: "canary revoked" });
    expect((await api("/v1/me", { key: stray.key })).body.code).toBe("INVALID_API_KEY");
    expect((await api("/v1/me", { key: revoked.key })).body.code).toBe("KEY_REVOKED");
    const conflict = await api("/v1/me", { key: owner.key, headers: { "x-api-key": stray.key } });
    expect(conflict.body.code).toBe("INVALID_API_KEY");
    const inQuery = await api(`/v1/transactions?api_key=${owner.key}`, { key: owner.key });
    expect(inQuery.status).toBe(400);
    // A key in the URL is refused on every path, even next to a valid header (test/foundation/request-order.test.ts).
    const me = await api(`/v1/me?api_key=${owner.key}`, { key: owner.key });
    expect(me.status).toBe(400);
    expect(me.body.details).toEqual([{ path: "api_key", message: expect.any(String) }]);
  });
});

describe("the scan itself", () => {
  it("reads every console line as it is written, though the console prints nothing (test/support/console.ts)", () => {
    const output = consoleOutput();
    const before = canaries.observationCount("console");
    const line = `a line only the capture sees ${crypto.randomUUID()}`;
    console.warn(line);
    expect(output.lines).toEqual([line]);
    expect(output.at("warn")).toEqual([line]);
    expect(canaries.observationCount("console")).toBe(before + 1);
    expect(() => vi.spyOn(console, "log")).toThrow(/consoleOutput\(\)/);
  });

  it("saw this file's responses and log lines, and registered its secrets (so a clean result is not vacuous)", async () => {
    await canaries.flush();
    await harvestStoredSecrets();
    const counts = canaries.counts();
    expect(counts.canary ?? 0).toBeGreaterThanOrEqual(planted.length);
    expect(counts["raw API key"] ?? 0).toBeGreaterThanOrEqual(4);
    expect(counts.ciphertext ?? 0).toBeGreaterThan(10);
    expect(counts["API key hash"] ?? 0).toBeGreaterThanOrEqual(4);
    expect(canaries.observationCount()).toBeGreaterThan(50);
    const leaks = canaries.findLeaks();
    expect(leaks.map((l) => `${l.kind} "${l.label}" in ${l.source} (${l.where})`)).toEqual([]);
  });
});
