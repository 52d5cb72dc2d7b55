// Secrets at rest (authConfig secrets, paywall header values) and the canary: a secret never leaves the Worker.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { decryptSecret, parseKeyRing } from "../../src/core/secrets/secret-box.ts";
import { api } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import { sessionOf } from "../support/fake-bindings.ts";
import {
  type Actor,
  actor,
  CANARY,
  createPaywall,
  createService,
  expectError,
  expectInvalid,
  type Paywall,
  proxyPaywallBody,
  rawRow,
  routePaywallBody,
  type Service,
  serviceBody,
} from "../support/resources.ts";

const ring = () => parseKeyRing(env.ENCRYPTION_KEY as string);
const STORED = /^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22,}$/;
const serviceAad = (tenantId: string, id: string, field: string) => `${tenantId}|service|${id}|authConfig.${field}`;
const headerAad = (tenantId: string, id: string, key: string) => `${tenantId}|paywall|${id}|headers.${key}`;

/** Every secret field of every method, each with its own canary-derived value. */
const METHODS: [string, Record<string, string>, Record<string, string>][] = [
  ["bearer", {}, { bearerToken: `${CANARY}-bearer` }],
  ["token", {}, { token: `${CANARY}-token` }],
  ["x-api-key", {}, { apiKey: `${CANARY}-xak` }],
  ["custom-header", { headerName: "X-Upstream" }, { headerValue: `${CANARY}-ch` }],
  ["query-param", { paramName: "key" }, { paramValue: `${CANARY}-qp` }],
  ["x-api-key-secret", {}, { apiKey: `${CANARY}-k`, apiSecret: `${CANARY}-s` }],
  ["json-body-field", { fieldName: "auth.token" }, { fieldValue: `${CANARY}-jbf` }],
];

describe("authConfig at rest", () => {
  it.each(METHODS)(
    "%s: secrets encrypted and bound to row and field, names in clear, no plaintext in the row",
    async (method, names, secrets) => {
      const who = await actor();
      const svc = await createService(who, { authMethod: method, authConfig: { ...names, ...secrets } });
      const row = await rawRow("services", svc.id);
      expect(row).not.toBeNull();
      const rowText = JSON.stringify(row);
      expect(rowText).not.toContain(CANARY);
      for (const value of Object.values(secrets)) expect(rowText).not.toContain(btoa(value).slice(0, 16));

      const stored = JSON.parse(row?.auth_config as string) as Record<string, string>;
      expect(Object.keys(stored).sort()).toEqual([...Object.keys(names), ...Object.keys(secrets)].sort());
      for (const [field, name] of Object.entries(names)) expect(stored[field]).toBe(name);
      for (const [field, plaintext] of Object.entries(secrets)) {
        expect(stored[field]).toMatch(STORED);
        expect(await decryptSecret(ring(), stored[field] as string, serviceAad(who.tenant.id, svc.id, field))).toBe(plaintext);
        // Bound to its row and field: another service id, field or tenant does not decrypt it.
        await expect(
          decryptSecret(ring(), stored[field] as string, serviceAad(who.tenant.id, "svc_other", field)),
        ).rejects.toThrow();
        await expect(
          decryptSecret(ring(), stored[field] as string, serviceAad(who.tenant.id, svc.id, "other")),
        ).rejects.toThrow();
        await expect(decryptSecret(ring(), stored[field] as string, serviceAad("ten_other", svc.id, field))).rejects.toThrow();
      }
      // The response masks every secret.
      expect(svc.authConfig).toEqual({ ...names, ...Object.fromEntries(Object.keys(secrets).map((k) => [k, "***"])) });
    },
  );

  it("the same secret in two services gives two different ciphertexts (fresh IV, per-row binding)", async () => {
    const who = await actor();
    const a = await createService(who, { authConfig: { bearerToken: CANARY } });
    const b = await createService(who, { authConfig: { bearerToken: CANARY } });
    const sa = JSON.parse((await rawRow("services", a.id))?.auth_config as string).bearerToken;
    const sb = JSON.parse((await rawRow("services", b.id))?.auth_config as string).bearerToken;
    expect(sa).not.toBe(sb);
  });

  it("a PATCH with a new value stores a new ciphertext of it; *** keeps the old one byte for byte", async () => {
    const who = await actor();
    const svc = await createService(who, {
      authMethod: "x-api-key-secret",
      authConfig: { apiKey: `${CANARY}-1`, apiSecret: `${CANARY}-2` },
    });
    const before = JSON.parse((await rawRow("services", svc.id))?.auth_config as string);
    const res = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { authConfig: { apiKey: "***", apiSecret: `${CANARY}-3` } },
    });
    expect(res.status, res.text).toBe(200);
    const row = await rawRow("services", svc.id);
    expect(JSON.stringify(row)).not.toContain(CANARY);
    const after = JSON.parse(row?.auth_config as string);
    expect(after.apiKey).toBe(before.apiKey);
    expect(after.apiSecret).toMatch(STORED);
    expect(after.apiSecret).not.toBe(before.apiSecret);
    expect(await decryptSecret(ring(), after.apiKey, serviceAad(who.tenant.id, svc.id, "apiKey"))).toBe(`${CANARY}-1`);
    expect(await decryptSecret(ring(), after.apiSecret, serviceAad(who.tenant.id, svc.id, "apiSecret"))).toBe(`${CANARY}-3`);
  });

  it("an authMethod change re-encrypts under the new field names", async () => {
    const who = await actor();
    const svc = await createService(who, { authMethod: "bearer", authConfig: { bearerToken: `${CANARY}-old` } });
    const res = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { authMethod: "custom-header", authConfig: { headerName: "X-K", headerValue: `${CANARY}-new` } },
    });
    expect(res.status, res.text).toBe(200);
    const stored = JSON.parse((await rawRow("services", svc.id))?.auth_config as string);
    expect(Object.keys(stored).sort()).toEqual(["headerName", "headerValue"]);
    expect(stored.headerName).toBe("X-K");
    expect(await decryptSecret(ring(), stored.headerValue, serviceAad(who.tenant.id, svc.id, "headerValue"))).toBe(
      `${CANARY}-new`,
    );
  });
});

describe("paywall headers at rest", () => {
  it("values encrypted and bound to the paywall and key; keys in clear; no plaintext in the row", async () => {
    const who = await actor();
    const svc = await createService(who);
    const headers = [
      { key: "X-Upstream-Token", value: `${CANARY}-h1` },
      { key: "x_second-2", value: `${CANARY}-h2` },
    ];
    const pw = await createPaywall(who, routePaywallBody(svc.id, { headers, queryParams: [{ key: "q", value: "clear" }] }));
    const row = await rawRow("paywalls", pw.id);
    expect(JSON.stringify(row)).not.toContain(CANARY);
    const stored = JSON.parse(row?.headers as string) as { key: string; value: string }[];
    expect(stored.map((h) => h.key)).toEqual(["X-Upstream-Token", "x_second-2"]);
    for (const [i, h] of stored.entries()) {
      expect(h.value).toMatch(STORED);
      expect(await decryptSecret(ring(), h.value, headerAad(who.tenant.id, pw.id, h.key))).toBe(headers[i]?.value);
      await expect(decryptSecret(ring(), h.value, headerAad(who.tenant.id, "pw_other", h.key))).rejects.toThrow();
      await expect(decryptSecret(ring(), h.value, headerAad(who.tenant.id, pw.id, "X-Other"))).rejects.toThrow();
    }
    // queryParams are not secret: stored and returned in clear.
    expect(JSON.parse(row?.query_params as string)).toEqual([{ key: "q", value: "clear" }]);
    expect(pw.queryParams).toEqual([{ key: "q", value: "clear" }]);
  });

  it("a PATCH encrypts new values, keeps *** values, and never stores plaintext", async () => {
    const who = await actor();
    const pw = await createPaywall(who, proxyPaywallBody({ headers: [{ key: "A", value: `${CANARY}-a` }] }));
    const before = JSON.parse((await rawRow("paywalls", pw.id))?.headers as string);
    const res = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: {
        headers: [
          { key: "A", value: "***" },
          { key: "B", value: `${CANARY}-b` },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    const row = await rawRow("paywalls", pw.id);
    expect(JSON.stringify(row)).not.toContain(CANARY);
    const after = JSON.parse(row?.headers as string);
    expect(after[0]).toEqual(before[0]);
    expect(await decryptSecret(ring(), after[1].value, headerAad(who.tenant.id, pw.id, "B"))).toBe(`${CANARY}-b`);
  });
});

describe("the canary never leaves the Worker", () => {
  let owner: Actor;
  let svc: Service;
  let pw: Paywall;
  const fullCanaryConfig = { apiKey: CANARY, apiSecret: CANARY };

  beforeAll(async () => {
    owner = await actor();
    svc = await createService(owner, { authMethod: "x-api-key-secret", authConfig: fullCanaryConfig });
    pw = await createPaywall(owner, routePaywallBody(svc.id, { slug: "canary", headers: [{ key: "X-C", value: CANARY }] }));
  });

  it("in success responses: create, get, lists, patch", async () => {
    const responses = [
      await api(`/v1/services/${svc.id}`, { key: owner.key }),
      await api("/v1/services", { key: owner.key }),
      await api(`/v1/paywalls/${pw.id}`, { key: owner.key }),
      await api("/v1/paywalls", { key: owner.key }),
      await api(`/v1/services/${svc.id}`, {
        key: owner.key,
        method: "PATCH",
        body: { authConfig: { apiKey: CANARY, apiSecret: "***" } },
      }),
      await api(`/v1/paywalls/${pw.id}`, { key: owner.key, method: "PATCH", body: { headers: [{ key: "X-C", value: CANARY }] } }),
    ];
    for (const r of responses) {
      expect(r.status, r.text).toBe(200);
      expect(r.text).not.toContain(CANARY);
    }
    expect(responses[0]?.body.data.authConfig).toEqual({ apiKey: "***", apiSecret: "***" });
    expect(responses[0]?.body.data.Paywall[0].headers).toEqual([{ key: "X-C", value: "***" }]);
  });

  it("in error responses: validation, SSRF, conflicts, wallets, ownership and scope refusals", async () => {
    const intruder = await actor();
    const results = [
      // Validation errors of a body that carries the canary.
      await api("/v1/services", {
        key: owner.key,
        method: "POST",
        body: serviceBody({ name: "", authConfig: { bearerToken: CANARY, extra: CANARY } }),
      }),
      await api("/v1/services", {
        key: owner.key,
        method: "POST",
        body: serviceBody({ authMethod: "token", authConfig: { wrongField: CANARY } }),
      }),
      await api("/v1/services", {
        key: owner.key,
        method: "POST",
        body: serviceBody({ authConfig: { bearerToken: CANARY.repeat(200) } }),
      }),
      await api("/v1/paywalls", {
        key: owner.key,
        method: "POST",
        body: routePaywallBody(svc.id, { price: "0", headers: [{ key: "X", value: CANARY.repeat(60) }] }),
      }),
      await api("/v1/paywalls", {
        key: owner.key,
        method: "POST",
        body: routePaywallBody(svc.id, {
          headers: [
            { key: "X", value: CANARY },
            { key: "x", value: CANARY },
          ],
        }),
      }),
      await api(`/v1/services/${svc.id}`, {
        key: owner.key,
        method: "PATCH",
        body: { authMethod: "bearer", authConfig: { apiKey: CANARY } },
      }),
      // SSRF with the canary in the body and in the URL's query.
      await api("/v1/services", {
        key: owner.key,
        method: "POST",
        body: serviceBody({ baseUrl: "http://127.0.0.1/", authConfig: { bearerToken: CANARY } }),
      }),
      // Conflict with a canary header.
      await api("/v1/paywalls", {
        key: owner.key,
        method: "POST",
        body: routePaywallBody(svc.id, { slug: "canary", headers: [{ key: "X", value: CANARY }] }),
      }),
      // Wallet refusal with a canary header in the same body.
      await api(`/v1/paywalls/${pw.id}`, {
        key: owner.key,
        method: "PATCH",
        body: { merchantWallet: `0x${"1".repeat(40)}`, headers: [{ key: "X", value: CANARY }] },
      }),
      // Another tenant's resources, with canary bodies.
      await api(`/v1/services/${svc.id}`, { key: intruder.key }),
      await api(`/v1/services/${svc.id}`, {
        key: intruder.key,
        method: "PATCH",
        body: { authConfig: { apiKey: CANARY, apiSecret: CANARY } },
      }),
      await api(`/v1/paywalls/${pw.id}`, {
        key: intruder.key,
        method: "PATCH",
        body: { headers: [{ key: "X-C", value: CANARY }] },
      }),
      // Malformed JSON containing the canary.
      await api("/v1/services", { key: owner.key, method: "POST", body: `{"authConfig": {"bearerToken": "${CANARY}"` }),
    ];
    for (const r of results) {
      expect(r.status, r.text).toBeGreaterThanOrEqual(400);
      expect(r.text).not.toContain(CANARY);
    }
    expectInvalid(results[0] as never, "name");
    expectInvalid(results[1] as never, "authConfig.wrongField");
    expectError(results[6] as never, 400, "SSRF_BLOCKED");
    expectError(results[7] as never, 409, "CONFLICT");
    expectError(results[8] as never, 400, "INVALID_WALLET");
    expectError(results[9] as never, 403, "FORBIDDEN");
  });

  it("in a database failure: 500 DATABASE_ERROR with neither the canary nor SQL in the body or the logs", async () => {
    const failingWrites = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "batch") return () => Promise.reject(new Error(`D1_ERROR: Network connection lost.`));
        if (prop === "withSession") return () => sessionOf(failingWrites);
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const broken = { ...env, DB: failingWrites } as Env;
    const output = consoleOutput();
    const results = [
      await api("/v1/services", {
        key: owner.key,
        method: "POST",
        body: serviceBody({ description: CANARY, authConfig: { bearerToken: CANARY } }),
        env: broken,
      }),
      await api("/v1/paywalls", {
        key: owner.key,
        method: "POST",
        body: routePaywallBody(svc.id, { description: CANARY, headers: [{ key: "X", value: CANARY }] }),
        env: broken,
      }),
    ];
    for (const r of results) {
      expectError(r, 500, "DATABASE_ERROR");
      expect(r.text).not.toContain(CANARY);
      expect(r.text).not.toMatch(/insert|select|params|SQLITE|D1_/i);
    }
    const newLogs = output.lines.join("\n");
    expect(newLogs).not.toContain(CANARY);
    expect(newLogs).not.toMatch(/insert into/i);
  });
});
