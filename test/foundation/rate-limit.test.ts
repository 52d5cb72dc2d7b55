import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { resumeKey, revokeKey } from "../../src/core/keys/management.ts";
import type { RateLimitDecision } from "../../src/core/keys/record.ts";
import { api } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import { createApiKey, createTenant, keys } from "../support/factories.ts";
import { fakeLimiter } from "../support/fake-bindings.ts";

const LIMIT = 1000;
const WINDOW_MS = 60_000;
const CONCURRENT = 1500;

/** Fires `n` calls at once and counts the admitted ones. */
async function admitted(n: number, hit: () => Promise<RateLimitDecision | boolean>) {
  const results = await Promise.all(Array.from({ length: n }, hit));
  return results.filter((r) => (typeof r === "boolean" ? r : r.allowed)).length;
}

const freshStub = <T extends Rpc.DurableObjectBranded | undefined>(ns: DurableObjectNamespace<T>) =>
  ns.get(ns.idFromName(`test-${crypto.randomUUID()}`));

describe("exact limit under concurrency", () => {
  it(`through the app: ${CONCURRENT} concurrent requests on one key admit exactly ${LIMIT}`, { timeout: 120_000 }, async () => {
    const { key } = await createApiKey();
    const statuses = await Promise.all(Array.from({ length: CONCURRENT }, () => api("/v1/me", { key }).then((r) => r.status)));
    const count = (s: number) => statuses.filter((x) => x === s).length;
    expect({ ok: count(200), limited: count(429) }).toEqual({ ok: LIMIT, limited: CONCURRENT - LIMIT });
  });

  it(`the Durable Object: ${CONCURRENT} concurrent hits admit exactly ${LIMIT}, each slot once`, {
    timeout: 60_000,
  }, async () => {
    const stub = freshStub(env.RATE_LIMITER);
    const decisions = await Promise.all(Array.from({ length: CONCURRENT }, () => stub.hit(LIMIT, WINDOW_MS)));
    const allowed = decisions.filter((d) => d.allowed);
    expect(allowed).toHaveLength(LIMIT);
    // Every admitted request saw a different remaining count: 999, 998, …, 0.
    expect(new Set(allowed.map((d) => d.remaining)).size).toBe(LIMIT);
    expect(Math.min(...allowed.map((d) => d.remaining))).toBe(0);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
    expect(new Set(decisions.map((d) => d.resetAt)).size).toBe(1);
  });

  // The deliberately racy variant bound in test/support/worker.ts (the real limiter with an await between reading
  // and writing the count): the same test must catch it.
  it("(mutant) env.RACY_RATE_LIMITER over-admits under the same test", { timeout: 90_000 }, async () => {
    const stub = freshStub(env.RACY_RATE_LIMITER);
    expect(await admitted(CONCURRENT, () => stub.hit(LIMIT, WINDOW_MS))).toBeGreaterThan(LIMIT);
  });

  it("the count survives eviction of the object (it is stored, not only in memory)", async () => {
    const stub = freshStub(env.RATE_LIMITER);
    for (let i = 0; i < 3; i++) await stub.hit(5, WINDOW_MS);
    await runInDurableObject(stub, (instance) => {
      // Drop the in-memory copy, as a fresh instance after eviction would have none.
      (instance as unknown as { window: unknown }).window = undefined;
    });
    expect(await stub.hit(5, WINDOW_MS)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await stub.hit(5, WINDOW_MS)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await stub.hit(5, WINDOW_MS)).toMatchObject({ allowed: false, remaining: 0 });
  });
});

describe("headers and refusal", () => {
  it("every authenticated response carries RateLimit-Limit/Remaining/Reset, counting down", async () => {
    const { key } = await createApiKey();
    const first = await api("/v1/me", { key });
    const second = await api("/v1/me", { key });
    expect(first.headers.get("RateLimit-Limit")).toBe("1000");
    expect(first.headers.get("RateLimit-Remaining")).toBe("999");
    expect(second.headers.get("RateLimit-Remaining")).toBe("998");
    const reset = Number(second.headers.get("RateLimit-Reset"));
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60);
  });

  it("a 404 under /v1 with a valid key also carries the headers and uses quota", async () => {
    const { key } = await createApiKey();
    const res = await api("/v1/nope", { key });
    expect(res.status).toBe(404);
    expect(res.headers.get("RateLimit-Remaining")).toBe("999");
    expect((await api("/v1/me", { key })).body.data.rateLimit.remaining).toBe(998);
  });

  it("/v1/me's rateLimit agrees with the headers", async () => {
    const { key } = await createApiKey();
    await api("/v1/me", { key });
    const { body, headers } = await api("/v1/me", { key });
    expect(body.data.rateLimit.limit).toBe(Number(headers.get("RateLimit-Limit")));
    expect(body.data.rateLimit.remaining).toBe(Number(headers.get("RateLimit-Remaining")));
    const secondsLeft = (Date.parse(body.data.rateLimit.resetAt) - Date.now()) / 1000;
    expect(Math.abs(secondsLeft - Number(headers.get("RateLimit-Reset")))).toBeLessThanOrEqual(2);
  });

  it("over the limit → 429 RATE_LIMITED with Retry-After in whole seconds and the error envelope", async () => {
    const { key } = await createApiKey();
    const limits = { RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_SECONDS: "30" };
    expect((await api("/v1/me", { key, env: limits })).headers.get("RateLimit-Remaining")).toBe("1");
    expect((await api("/v1/me", { key, env: limits })).headers.get("RateLimit-Remaining")).toBe("0");
    const res = await api("/v1/me", { key, env: limits });
    expect(res.status).toBe(429);
    const retryAfter = res.headers.get("Retry-After");
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(30);
    expect(res.headers.get("RateLimit-Limit")).toBe("2");
    expect(res.headers.get("RateLimit-Remaining")).toBe("0");
    expect(res.headers.get("RateLimit-Reset")).toBe(retryAfter);
    const body = res.body;
    expect(Object.keys(body).sort()).toEqual(["code", "error", "meta"]);
    expect(body.code).toBe("RATE_LIMITED");
    expect(body.meta.requestId).toBe(res.headers.get("X-Request-Id"));
  });

  it("stays refused for the rest of the window, then admits again once it resets", async () => {
    const clock = useTestClock();
    const { key } = await createApiKey();
    const limits = { RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_SECONDS: "30" };
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await api("/v1/me", { key, env: limits })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await api("/v1/me", { key, env: limits });
    expect(refused.headers.get("Retry-After")).toBe("30");
    clock.advance(29_999);
    const last = await api("/v1/me", { key, env: limits });
    expect(last.status).toBe(429);
    expect(last.headers.get("Retry-After")).toBe("1");
    clock.advance(1);
    const again = await api("/v1/me", { key, env: limits });
    expect(again.status).toBe(200);
    expect(again.headers.get("RateLimit-Remaining")).toBe("2");
  });

  it("one key's exhaustion does not touch another key, even of the same tenant", async () => {
    const tenant = await createTenant();
    const a = await createApiKey({ tenant });
    const b = await createApiKey({ tenant });
    const limits = { RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_SECONDS: "60" };
    for (let i = 0; i < 3; i++) await api("/v1/me", { key: a.key, env: limits });
    expect((await api("/v1/me", { key: a.key, env: limits })).status).toBe(429);
    const res = await api("/v1/me", { key: b.key, env: limits });
    expect(res.status).toBe(200);
    expect(res.headers.get("RateLimit-Remaining")).toBe("1");
  });
});

describe("requests refused by authentication use no quota", () => {
  it("a paused key's refused requests do not count once it is resumed", async () => {
    const { key, row } = await createApiKey({ status: "paused" });
    for (let i = 0; i < 5; i++) expect((await api("/v1/me", { key })).status).toBe(401);
    await resumeKey(keys(), { id: row.id });
    expect((await api("/v1/me", { key })).body.data.rateLimit.remaining).toBe(999);
  });

  it("requests from outside the allowlist do not count", async () => {
    const { key } = await createApiKey({ allowIps: ["203.0.113.7"] });
    for (let i = 0; i < 5; i++) expect((await api("/v1/me", { key, ip: "192.0.2.1" })).status).toBe(403);
    expect((await api("/v1/me", { key, ip: "203.0.113.7" })).body.data.rateLimit.remaining).toBe(999);
  });

  it("refused requests carry the client address's RateLimit numbers, not the key's (test/foundation/client-rate-limit.test.ts)", async () => {
    const { key } = await createApiKey({ status: "revoked" });
    const res = await api("/v1/me", {
      key,
      env: { IP_RATE_LIMIT_MAX: "50" },
      ip: `2001:db8:${crypto.randomUUID().slice(0, 4)}::1`,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("RateLimit-Limit")).toBe("50");
  });

  it("an exhausted key that is then revoked answers KEY_REVOKED, not RATE_LIMITED", async () => {
    const { key, row } = await createApiKey();
    const limits = { RATE_LIMIT_MAX: "1", RATE_LIMIT_WINDOW_SECONDS: "60" };
    await api("/v1/me", { key, env: limits });
    expect((await api("/v1/me", { key, env: limits })).status).toBe(429);
    await revokeKey(keys(), { id: row.id });
    const res = await api("/v1/me", { key, env: limits });
    expect(res.body.code).toBe("KEY_REVOKED");
  });
});

describe("when the limiter fails", () => {
  // A key this isolate has already seen usable: its requests go to its key's object alone (no address count first).
  const knownKey = async () => {
    const created = await createApiKey();
    expect((await api("/v1/me", { key: created.key })).status).toBe(200);
    return created;
  };

  const ok = (limit: number, windowMs: number): RateLimitDecision => ({
    allowed: true,
    limit,
    remaining: limit - 1,
    resetAt: Date.now() + windowMs,
  });

  it("a thrown error → 503 SERVICE_UNAVAILABLE with Retry-After: 1 (fails closed)", async () => {
    const { key } = await knownKey();
    const hit = vi.fn(() => {
      throw new Error("Durable Object reset because its code was updated.");
    });
    const res = await api("/v1/me", { key, env: { RATE_LIMITER: fakeLimiter(hit) } });
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("1");
    const body = res.body;
    expect(body.code).toBe("SERVICE_UNAVAILABLE");
    expect(body.error).not.toContain("Durable Object");
    expect(hit).toHaveBeenCalledTimes(1);
  });

  it("a retryable error is retried once; success on the retry → 200", async () => {
    const { key } = await knownKey();
    let calls = 0;
    const hit = vi.fn((limit: number, windowMs: number) => {
      if (calls++ === 0) throw Object.assign(new Error("Network connection lost."), { retryable: true });
      return ok(limit, windowMs);
    });
    const res = await api("/v1/me", { key, env: { RATE_LIMITER: fakeLimiter(hit) } });
    expect(res.status).toBe(200);
    expect(hit).toHaveBeenCalledTimes(2);
  });

  it("a retryable error that persists → 503 after exactly one retry", async () => {
    const { key } = await knownKey();
    const hit = vi.fn(() => {
      throw Object.assign(new Error("Network connection lost."), { retryable: true });
    });
    const res = await api("/v1/me", { key, env: { RATE_LIMITER: fakeLimiter(hit) } });
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("1");
    expect(hit).toHaveBeenCalledTimes(2);
  });

  it("an overloaded object is not retried", async () => {
    const { key } = await knownKey();
    const hit = vi.fn(() => {
      throw Object.assign(new Error("Durable Object is overloaded."), { retryable: true, overloaded: true });
    });
    const res = await api("/v1/me", { key, env: { RATE_LIMITER: fakeLimiter(hit) } });
    expect(res.status).toBe(503);
    expect(hit).toHaveBeenCalledTimes(1);
  });
});
