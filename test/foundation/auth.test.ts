import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/core/keys/api-key.ts";
import { keyObjectName } from "../../src/core/keys/key-object.ts";
import { pauseKey, removeKey, resumeKey, revokeKey } from "../../src/core/keys/management.ts";
import { RECORD_MAX_AGE_MS } from "../../src/core/keys/record.ts";
import { SCOPES } from "../../src/core/keys/scopes.ts";
import { type ApiResult, api } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import { createApiKey, createTenant, keys, unknownKey } from "../support/factories.ts";
import { recordingDb, recordingLimiter } from "../support/fake-bindings.ts";

const authError = async (res: ApiResult) => {
  const body = res.body as { error: string; code: string; meta: { requestId: string } };
  return { status: res.status, code: body.code, body };
};

describe("missing, malformed and unknown keys", () => {
  it("no key → 401 INVALID_API_KEY, with a message that says how to send one", async () => {
    const { status, body } = await api("/v1/me");
    expect(status).toBe(401);
    expect(body.code).toBe("INVALID_API_KEY");
    expect(body.error).toMatch(/Authorization|X-Api-Key/);
  });

  it.each([
    ["not a key", { authorization: "Bearer hello" }],
    ["uppercase hex", { authorization: `Bearer mpk_${"A".repeat(64)}` }],
    ["63 hex", { authorization: `Bearer mpk_${"a".repeat(63)}` }],
    ["another scheme", { authorization: `Basic ${btoa("user:pass")}` }],
    ["no scheme", { authorization: `mpk_${"a".repeat(64)}` }],
    ["scheme only", { authorization: "Bearer" }],
    ["malformed X-Api-Key", { "x-api-key": "mpk_short" }],
  ])("malformed key (%s) → 401 INVALID_API_KEY", async (_, headers) => {
    expect(await authError(await api("/v1/me", { headers }))).toMatchObject({ status: 401, code: "INVALID_API_KEY" });
  });

  it("a well-formed key nobody holds → 401 INVALID_API_KEY", async () => {
    expect(await authError(await api("/v1/me", { key: unknownKey() }))).toMatchObject({ status: 401, code: "INVALID_API_KEY" });
  });

  it("a real key with one character changed → 401 INVALID_API_KEY", async () => {
    const { key } = await createApiKey();
    const last = key.at(-1) === "0" ? "1" : "0";
    expect(await authError(await api("/v1/me", { key: key.slice(0, -1) + last }))).toMatchObject({
      status: 401,
      code: "INVALID_API_KEY",
    });
  });

  it("the key prefix alone is not a key", async () => {
    const { row } = await createApiKey();
    expect((await api("/v1/me", { key: row.keyPrefix })).status).toBe(401);
  });
});

describe("malformed keys cost no database query", () => {
  const malformed: Record<string, string>[] = [
    { authorization: "Bearer hello" },
    { authorization: `Bearer mpk_${"A".repeat(64)}` },
    { authorization: `Bearer mpk_${"a".repeat(65)}` },
    { authorization: `Basic ${btoa("a:b")}` },
    { authorization: "Bearer" },
    { "x-api-key": "mpk_short" },
    { "x-api-key": `mpk_${"a".repeat(64)}'--` },
    { authorization: `Bearer mpk_${"a".repeat(64)}`, "x-api-key": `mpk_${"b".repeat(64)}` },
    {},
  ];

  it.each(malformed)("%j → 401 INVALID_API_KEY and the database is never touched", async (headers) => {
    const { db: spy, calls } = recordingDb();
    const res = await api("/v1/me", { headers, env: { DB: spy } });
    expect(await authError(res)).toMatchObject({ status: 401, code: "INVALID_API_KEY" });
    expect(calls).toEqual([]);
  });

  it("(control) a well-formed key does reach its key's object, named after its hash", async () => {
    const key = unknownKey();
    const limiter = recordingLimiter();
    const res = await api("/v1/me", { key, env: { RATE_LIMITER: limiter.ns } });
    expect(res.status).toBe(401);
    expect(limiter.names).toContain(keyObjectName(await hashApiKey(key)));
  });

  it("a valid key authenticates without a single D1 statement in the Worker (its object holds its record)", async () => {
    const { key } = await createApiKey();
    expect((await api("/v1/me", { key })).status).toBe(200);
    const { db: spy, calls } = recordingDb();
    for (let i = 0; i < 3; i++) expect((await api("/v1/me", { key, env: { DB: spy } })).status).toBe(200);
    expect(calls).toEqual([]);
  });
});

describe("malformed keys never reach a key's object", () => {
  it.each<Record<string, string>>([
    { authorization: "Bearer hello" },
    { "x-api-key": "mpk_short" },
    { authorization: `Bearer mpk_${"a".repeat(64)}`, "x-api-key": `mpk_${"b".repeat(64)}` },
  ])("%j → only the client address's bucket is asked", async (headers) => {
    const limiter = recordingLimiter();
    expect((await api("/v1/me", { headers, env: { RATE_LIMITER: limiter.ns } })).status).toBe(401);
    expect(limiter.names.every((name) => name.startsWith("ip:"))).toBe(true);
  });
});

describe("key state", () => {
  it("revoked → 401 KEY_REVOKED", async () => {
    const { key } = await createApiKey({ status: "revoked" });
    expect(await authError(await api("/v1/me", { key }))).toMatchObject({ status: 401, code: "KEY_REVOKED" });
  });

  it("paused → 401 KEY_INACTIVE", async () => {
    const { key } = await createApiKey({ status: "paused" });
    expect(await authError(await api("/v1/me", { key }))).toMatchObject({ status: 401, code: "KEY_INACTIVE" });
  });

  it("expired → 401 KEY_EXPIRED", async () => {
    const { key } = await createApiKey({ expiresAt: new Date(Date.now() - 1000) });
    expect(await authError(await api("/v1/me", { key }))).toMatchObject({ status: 401, code: "KEY_EXPIRED" });
  });

  it("expiring in the future works up to its last millisecond, and stops working at the moment itself", async () => {
    const clock = useTestClock();
    const { key } = await createApiKey({ expiresAt: new Date(clock.now() + 1500) });
    expect((await api("/v1/me", { key })).status).toBe(200);
    clock.advance(1499);
    expect((await api("/v1/me", { key })).status).toBe(200);
    clock.advance(1);
    expect(await authError(await api("/v1/me", { key }))).toMatchObject({ status: 401, code: "KEY_EXPIRED" });
  });

  it("expiring far in the future works", async () => {
    const { key } = await createApiKey({ expiresAt: new Date(Date.now() + 365 * 24 * 3600 * 1000) });
    expect((await api("/v1/me", { key })).status).toBe(200);
  });

  it("revoked and expired → KEY_REVOKED; paused and expired → KEY_EXPIRED", async () => {
    const past = new Date(Date.now() - 60_000);
    const revoked = await createApiKey({ status: "revoked", expiresAt: past });
    const paused = await createApiKey({ status: "paused", expiresAt: past });
    expect((await authError(await api("/v1/me", { key: revoked.key }))).code).toBe("KEY_REVOKED");
    expect((await authError(await api("/v1/me", { key: paused.key }))).code).toBe("KEY_EXPIRED");
  });

  it("a pause, a resume and a revocation take effect on the very next request", async () => {
    const { key, row } = await createApiKey();
    expect((await api("/v1/me", { key })).status).toBe(200);

    await pauseKey(keys(), { id: row.id });
    expect((await authError(await api("/v1/me", { key }))).code).toBe("KEY_INACTIVE");

    await resumeKey(keys(), { id: row.id });
    expect((await api("/v1/me", { key })).status).toBe(200);

    await revokeKey(keys(), { id: row.id });
    expect((await authError(await api("/v1/me", { key }))).code).toBe("KEY_REVOKED");
  });

  it("a deleted key → 401 INVALID_API_KEY on the next request", async () => {
    const { key, row } = await createApiKey();
    expect((await api("/v1/me", { key })).status).toBe(200);
    await removeKey(keys(), { id: row.id });
    expect(await authError(await api("/v1/me", { key }))).toMatchObject({ status: 401, code: "INVALID_API_KEY" });
  });

  it("a change made in D1 by hand (not through key management) reaches requests once the record's age runs out", async () => {
    const clock = useTestClock();
    const { key, tenant } = await createApiKey();
    expect((await api("/v1/me", { key })).status).toBe(200);
    await env.DB.prepare("DELETE FROM tenants WHERE id = ?").bind(tenant.id).run();
    // The object was not told: it still holds the record it read...
    expect((await api("/v1/me", { key })).status).toBe(200);
    clock.advance(RECORD_MAX_AGE_MS - 1);
    expect((await api("/v1/me", { key })).status).toBe(200);
    // ...for RECORD_MAX_AGE_MS at most.
    clock.advance(1);
    expect((await api("/v1/me", { key })).status).toBe(401);
  });
});

describe("headers", () => {
  it("X-Api-Key works alone", async () => {
    const { key, row } = await createApiKey();
    const { status, body } = await api("/v1/me", { headers: { "x-api-key": key } });
    expect(status).toBe(200);
    expect(body.data.apiKey.id).toBe(row.id);
  });

  it("a lowercase `bearer` scheme works", async () => {
    const { key } = await createApiKey();
    expect((await api("/v1/me", { headers: { authorization: `bearer ${key}` } })).status).toBe(200);
  });

  it("both headers with the same key work", async () => {
    const { key } = await createApiKey();
    expect((await api("/v1/me", { key, headers: { "x-api-key": key } })).status).toBe(200);
  });

  it("two different valid keys → 401 INVALID_API_KEY (neither is used)", async () => {
    const a = await createApiKey();
    const b = await createApiKey();
    expect(await authError(await api("/v1/me", { key: a.key, headers: { "x-api-key": b.key } }))).toMatchObject({
      status: 401,
      code: "INVALID_API_KEY",
    });
  });

  it("a valid Bearer key with a malformed X-Api-Key → 401", async () => {
    const { key } = await createApiKey();
    expect((await api("/v1/me", { key, headers: { "x-api-key": "nonsense" } })).status).toBe(401);
  });

  it("the key is not read from the query string (it is refused there: test/foundation/request-order.test.ts)", async () => {
    const { key } = await createApiKey();
    const res = await api(`/v1/me?api_key=${key}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("RateLimit-Limit")).toBeNull(); // never authenticated
  });
});

describe("IP allowlist", () => {
  it.each([
    ["an IPv4 address", ["203.0.113.7"], "203.0.113.7", "203.0.113.8"],
    ["an IPv4 block", ["198.51.100.0/24"], "198.51.100.200", "198.51.101.1"],
    ["an IPv6 address", ["2001:db8::1"], "2001:0db8:0:0::1", "2001:db8::2"],
    ["an IPv6 block", ["2001:db8:abcd::/48"], "2001:db8:abcd:1::9", "2001:db8:abce::1"],
    ["an IPv4 address, from a mapped client", ["203.0.113.7"], "::ffff:203.0.113.7", "::ffff:203.0.113.8"],
    ["an IPv4 block, from a mapped client", ["203.0.113.0/24"], "::ffff:203.0.113.77", "::ffff:198.51.100.1"],
    ["several entries", ["192.0.2.1", "2001:db8::/32"], "2001:db8:1::1", "192.0.2.2"],
  ])("%s: inside → 200, outside → 403 IP_NOT_ALLOWED", async (_, allowIps, inside, outside) => {
    const { key } = await createApiKey({ allowIps });
    expect((await api("/v1/me", { key, ip: inside })).status).toBe(200);
    expect(await authError(await api("/v1/me", { key, ip: outside }))).toMatchObject({ status: 403, code: "IP_NOT_ALLOWED" });
  });

  it("with an allowlist, a request without a client address is refused", async () => {
    const { key } = await createApiKey({ allowIps: ["0.0.0.0/0", "::/0"] });
    expect(await authError(await api("/v1/me", { key }))).toMatchObject({ status: 403, code: "IP_NOT_ALLOWED" });
  });

  it("an IPv4 allowlist refuses IPv6 clients", async () => {
    const { key } = await createApiKey({ allowIps: ["0.0.0.0/0"] });
    expect((await api("/v1/me", { key, ip: "2001:db8::1" })).status).toBe(403);
    expect((await api("/v1/me", { key, ip: "192.0.2.1" })).status).toBe(200);
  });

  it("an empty allowlist admits any address", async () => {
    const { key } = await createApiKey({ allowIps: [] });
    for (const ip of ["203.0.113.7", "2001:db8::1", "::ffff:10.1.2.3"]) {
      expect((await api("/v1/me", { key, ip })).status).toBe(200);
    }
  });

  it("only CF-Connecting-IP counts, not X-Forwarded-For or X-Real-IP", async () => {
    const { key } = await createApiKey({ allowIps: ["203.0.113.7"] });
    const spoofed = { "x-forwarded-for": "203.0.113.7", "x-real-ip": "203.0.113.7" };
    expect((await api("/v1/me", { key, ip: "192.0.2.1", headers: spoofed })).status).toBe(403);
  });

  it("key state is checked before the allowlist: a revoked key from outside → KEY_REVOKED", async () => {
    const { key } = await createApiKey({ status: "revoked", allowIps: ["203.0.113.7"] });
    expect((await authError(await api("/v1/me", { key, ip: "192.0.2.1" }))).code).toBe("KEY_REVOKED");
  });
});

describe("GET /v1/me", () => {
  it("returns exactly the identity behind the key", async () => {
    const tenant = await createTenant();
    const { key, row } = await createApiKey({ tenant, scopes: ["services:read", "paywalls:write"], name: "CI deploy" });
    const before = Date.now();
    const { status, body, headers } = await api("/v1/me", { key });
    expect(status).toBe(200);
    expect(body.data).toEqual({
      user: {
        id: tenant.id,
        email: tenant.email,
        name: tenant.name,
        walletAddress: tenant.walletAddress,
        tempoWalletAddress: tenant.tempoWalletAddress,
      },
      apiKey: { id: row.id, name: "CI deploy", scopes: ["services:read", "paywalls:write"], keyPrefix: key.slice(0, 12) },
      rateLimit: { limit: 1000, remaining: 999, resetAt: expect.any(String) },
    });
    expect(body.data.apiKey.keyPrefix).toMatch(/^mpk_[0-9a-f]{8}$/);
    const resetAt = Date.parse(body.data.rateLimit.resetAt);
    expect(new Date(resetAt).toISOString()).toBe(body.data.rateLimit.resetAt);
    expect(resetAt).toBeGreaterThan(before);
    expect(resetAt).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(headers.get("RateLimit-Remaining")).toBe("999");
  });

  it("never returns the key, its hash or internal fields", async () => {
    const { key, row } = await createApiKey();
    const res = await api("/v1/me", { key });
    const text = res.text;
    expect(text).not.toContain(key);
    expect(text).not.toContain(row.keyHash);
    expect(text).not.toMatch(/keyHash|key_hash|allowedIps|revokedAt/);
  });

  it.each(SCOPES)("works with the single scope %s", async (scope) => {
    const { key } = await createApiKey({ scopes: [scope] });
    const { status, body } = await api("/v1/me", { key });
    expect(status).toBe(200);
    expect(body.data.apiKey.scopes).toEqual([scope]);
  });

  it("works with X-Api-Key and reports the same identity", async () => {
    const { key, row, tenant } = await createApiKey();
    const { body } = await api("/v1/me", { headers: { "x-api-key": key } });
    expect(body.data.user.id).toBe(tenant.id);
    expect(body.data.apiKey.id).toBe(row.id);
  });

  it("reports a tenant without a Tempo wallet as null", async () => {
    const tenant = await createTenant({ tempoWalletAddress: null });
    const { key } = await createApiKey({ tenant });
    const { status, body } = await api("/v1/me", { key });
    expect(status).toBe(200);
    expect(body.data.user.tempoWalletAddress).toBeNull();
  });

  it("two keys of one tenant report the same user and their own key", async () => {
    const tenant = await createTenant();
    const a = await createApiKey({ tenant, name: "a" });
    const b = await createApiKey({ tenant, name: "b" });
    const ra = await api("/v1/me", { key: a.key });
    const rb = await api("/v1/me", { key: b.key });
    expect(ra.body.data.user).toEqual(rb.body.data.user);
    expect([ra.body.data.apiKey.name, rb.body.data.apiKey.name]).toEqual(["a", "b"]);
  });

  it("records lastUsedAt after a successful request", async () => {
    const { key, row } = await createApiKey();
    expect(row.lastUsedAt).toBeNull();
    await api("/v1/me", { key, env: {} });
    const stored = await env.DB.prepare("SELECT last_used_at FROM api_keys WHERE id = ?")
      .bind(row.id)
      .first<{ last_used_at: number }>();
    expect(stored?.last_used_at).toBeGreaterThan(0);
  });
});

describe("WWW-Authenticate on every 401 (RFC 6750)", () => {
  it('no key → Bearer realm="api", without an error attribute', async () => {
    const res = await api("/v1/me");
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe('Bearer realm="api"');
  });

  it.each([
    ["a malformed key", async () => ({ headers: { authorization: "Bearer nope" } })],
    ["two different keys", async () => ({ headers: { authorization: `Bearer ${unknownKey()}`, "x-api-key": unknownKey() } })],
    ["a key nobody holds", async () => ({ key: unknownKey() })],
    ["a revoked key", async () => ({ key: (await createApiKey({ status: "revoked" })).key })],
    ["a paused key", async () => ({ key: (await createApiKey({ status: "paused" })).key })],
    ["an expired key", async () => ({ key: (await createApiKey({ expiresAt: new Date(Date.now() - 1000) })).key })],
  ])('%s → error="invalid_token"', async (_, options) => {
    const res = await api("/v1/services", await options());
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe('Bearer realm="api", error="invalid_token"');
  });

  it("no other status carries it", async () => {
    const { key } = await createApiKey({ scopes: [] });
    for (const res of [await api("/v1/me", { key }), await api("/v1/services", { key }), await api("/v1/health")]) {
      expect(res.status).not.toBe(401);
      expect(res.headers.get("WWW-Authenticate")).toBeNull();
    }
  });
});
