// The per-client-address limit: what answers without a key (`/v1/health`, `/openapi.json`) and every request refused
// with 401 are counted in the client address's bucket (the rate limiter's Durable Object named `ip:<address>`), over
// HTTP through the Worker. A valid key's requests touch that bucket once per isolate (the first one), never after.
import { describe, expect, it, vi } from "vitest";
import { getConfig } from "../../src/core/config.ts";
import { hashApiKey } from "../../src/core/keys/api-key.ts";
import { keyObjectName } from "../../src/core/keys/key-object.ts";
import { clientBucket, UNKNOWN_CLIENT_BUCKET } from "../../src/core/rate-limit/client-bucket.ts";
import { api } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import { createApiKey, unknownKey } from "../support/factories.ts";
import { fakeLimiter, recordingLimiter } from "../support/fake-bindings.ts";

const hex = () => Math.floor(Math.random() * 0x10000).toString(16);
/** An address no other test uses (its own /64), so its bucket and this isolate's note about it start empty. */
const freshAddress = () => `2001:db8:${hex()}:${hex()}::${hex()}`;

const rateHeaders = (headers: Headers) => ({
  limit: headers.get("RateLimit-Limit"),
  remaining: headers.get("RateLimit-Remaining"),
  reset: headers.get("RateLimit-Reset"),
});

describe("the bucket of a client address", () => {
  it.each([
    ["203.0.113.7", "ip:203.0.113.7"],
    ["::ffff:203.0.113.7", "ip:203.0.113.7"],
    ["2001:db8:1:2:3:4:5:6", "ip:2001:db8:1:2::/64"],
    ["2001:DB8:1:2::ffff", "ip:2001:db8:1:2::/64"],
    ["2001:db8:1:3::1", "ip:2001:db8:1:3::/64"],
    ["::1", "ip:0:0:0:0::/64"],
    [undefined, UNKNOWN_CLIENT_BUCKET],
    ["", UNKNOWN_CLIENT_BUCKET],
    ["10.0.0.010", UNKNOWN_CLIENT_BUCKET],
    ["203.0.113.7, 10.0.0.1", UNKNOWN_CLIENT_BUCKET],
    ["fe80::1%eth0", UNKNOWN_CLIENT_BUCKET],
  ])("%j → %s", (header, bucket) => {
    expect(clientBucket(header)).toBe(bucket);
  });

  it("IP_RATE_LIMIT_MAX defaults to 120 per window and must be a positive integer", () => {
    expect(getConfig({}).rateLimit).toMatchObject({ ipMax: 120, windowMs: 60_000 });
    expect(getConfig({ IP_RATE_LIMIT_MAX: "7" }).rateLimit.ipMax).toBe(7);
    for (const bad of ["0", "-1", "1.5", "many"]) expect(() => getConfig({ IP_RATE_LIMIT_MAX: bad })).toThrow();
  });
});

describe("operations without a key are counted per client address", () => {
  for (const path of ["/v1/health", "/openapi.json"]) {
    it(`${path}: RateLimit headers counting down, then 429 RATE_LIMITED with Retry-After`, async () => {
      const ip = freshAddress();
      const limits = { IP_RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_SECONDS: "30" };
      const seen = [];
      for (let i = 0; i < 3; i++) {
        const res = await api(path, { ip, env: limits });
        seen.push({ status: res.status, ...rateHeaders(res.headers) });
      }
      expect(seen.map(({ reset, ...rest }) => rest)).toEqual([
        { status: 200, limit: "3", remaining: "2" },
        { status: 200, limit: "3", remaining: "1" },
        { status: 200, limit: "3", remaining: "0" },
      ]);
      for (const { reset } of seen) expect(Number(reset)).toBeGreaterThanOrEqual(1);
      const refused = await api(path, { ip, env: limits });
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe("RATE_LIMITED");
      expect(Object.keys(refused.body).sort()).toEqual(["code", "error", "meta"]);
      const retryAfter = Number(refused.headers.get("Retry-After"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(30);
      expect(rateHeaders(refused.headers)).toEqual({ limit: "3", remaining: "0", reset: String(retryAfter) });
      // Another address is not touched.
      expect((await api(path, { ip: freshAddress(), env: limits })).status).toBe(200);
    });
  }

  it("HEAD /v1/health counts like GET; another method meets authentication (401, counted too)", async () => {
    const ip = freshAddress();
    const limits = { IP_RATE_LIMIT_MAX: "2" };
    expect((await api("/v1/health", { ip, env: limits, method: "HEAD" })).status).toBe(200);
    expect((await api("/v1/health", { ip, env: limits, method: "POST" })).status).toBe(401);
    const refused = await api("/v1/health", { ip, env: limits, method: "HEAD" });
    expect(refused.status).toBe(429);
  });

  it("addresses of one IPv6 /64 share a bucket; the unknown address is one bucket", async () => {
    const prefix = `2001:db8:${hex()}:${hex()}`;
    const limits = { IP_RATE_LIMIT_MAX: "2" };
    expect((await api("/v1/health", { ip: `${prefix}::1`, env: limits })).status).toBe(200);
    expect((await api("/v1/health", { ip: `${prefix}:ffff:ffff:ffff:ffff`, env: limits })).status).toBe(200);
    expect((await api("/v1/health", { ip: `${prefix}::2`, env: limits })).status).toBe(429);
    const limiter = recordingLimiter();
    await api("/v1/health", { env: { RATE_LIMITER: limiter.ns } });
    expect(limiter.names).toEqual([UNKNOWN_CLIENT_BUCKET]);
  });

  it("a refused health check is logged as CLIENT_RATE_LIMITED", async () => {
    const logs = consoleOutput();
    const ip = freshAddress();
    const limits = { IP_RATE_LIMIT_MAX: "1" };
    await api("/v1/health", { ip, env: limits });
    const res = await api("/v1/health", { ip, env: limits });
    const line = logs.entries().find((e) => e.requestId === res.headers.get("X-Request-Id"));
    expect(line).toMatchObject({ status: 429, error: "CLIENT_RATE_LIMITED" });
  });

  it("a limiter that cannot answer is not the health check's failure: 200 without RateLimit headers", async () => {
    const hit = vi.fn(() => {
      throw new Error("Durable Object reset because its code was updated.");
    });
    const res = await api("/v1/health", { ip: freshAddress(), env: { RATE_LIMITER: fakeLimiter(hit) } });
    expect(res.status).toBe(200);
    expect(res.headers.get("RateLimit-Limit")).toBeNull();
    expect(hit).toHaveBeenCalledTimes(1);
  });
});

describe("failed authentications are counted per client address", () => {
  const identities = async () => {
    const revoked = await createApiKey({ status: "revoked" });
    const paused = await createApiKey({ status: "paused" });
    const expired = await createApiKey({ expiresAt: new Date(Date.now() - 1000) });
    return {
      "no key": {},
      "malformed key": { authorization: "Bearer nope" },
      "unknown key": { authorization: `Bearer ${unknownKey()}` },
      "revoked key": { "x-api-key": revoked.key },
      "paused key": { authorization: `Bearer ${paused.key}` },
      "expired key": { authorization: `Bearer ${expired.key}` },
    } as Record<string, Record<string, string>>;
  };

  it("each kind of 401 counts before it is answered: the attempt after the limit is 429, not 401", async () => {
    const limits = { IP_RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_SECONDS: "60" };
    const outcomes: Record<string, string[]> = {};
    for (const [who, headers] of Object.entries(await identities())) {
      const ip = freshAddress();
      outcomes[who] = [];
      for (let i = 0; i < 3; i++) {
        const res = await api("/v1/services", { ip, headers, env: limits });
        outcomes[who].push(
          `${res.status} ${res.body.code} ${res.headers.get("RateLimit-Limit")}/${res.headers.get("RateLimit-Remaining")}`,
        );
        if (res.status === 401) expect(res.headers.get("WWW-Authenticate"), who).toMatch(/^Bearer realm="api"/);
        if (res.status === 429) expect(Number(res.headers.get("Retry-After")), who).toBeGreaterThanOrEqual(1);
      }
    }
    for (const [who, seen] of Object.entries(outcomes)) {
      expect({ who, seen }).toEqual({
        who,
        seen: [expect.stringMatching(/^401 \w+ 2\/1$/), expect.stringMatching(/^401 \w+ 2\/0$/), "429 RATE_LIMITED 2/0"],
      });
    }
  });

  it("once an address is over its limit, its failed attempts are 429 while a valid key from it is still served (a shared address cannot lock a tenant out)", async () => {
    const { key } = await createApiKey();
    expect((await api("/v1/me", { ip: freshAddress(), key })).status).toBe(200); // the isolate has seen the key usable
    const ip = freshAddress();
    const limits = { IP_RATE_LIMIT_MAX: "2" };
    for (let i = 0; i < 3; i++) await api("/v1/me", { ip, key: unknownKey(), env: limits });
    const guess = await api("/v1/me", { ip, key: unknownKey(), env: limits });
    expect(guess.status).toBe(429);
    expect(guess.body.code).toBe("RATE_LIMITED");
    expect(rateHeaders(guess.headers)).toMatchObject({ limit: "2", remaining: "0" });
    const right = await api("/v1/me", { ip, key, env: limits });
    expect(right.status, right.text).toBe(200);
    expect(right.headers.get("RateLimit-Limit")).toBe("1000");
    // The same valid key from another address is served too, with its own (key) numbers.
    const elsewhere = await api("/v1/me", { ip: freshAddress(), key, env: limits });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get("RateLimit-Limit")).toBe("1000");
  });

  it("from an address over its limit, a key the isolate has not seen gets 429 before any key's object is asked (unknown keys create no objects, cost no D1 read)", async () => {
    const ip = freshAddress();
    const limiter = recordingLimiter();
    const limits = { IP_RATE_LIMIT_MAX: "2", RATE_LIMITER: limiter.ns };
    for (let i = 0; i < 2; i++) expect((await api("/v1/me", { ip, key: unknownKey(), env: limits })).status).toBe(401);
    const objectsBefore = limiter.names.filter((name) => name.startsWith("key:")).length;
    expect(objectsBefore).toBe(2);
    for (let i = 0; i < 5; i++) {
      const res = await api("/v1/me", { ip, key: unknownKey(), env: limits });
      expect(res.status).toBe(429);
    }
    const { key } = await createApiKey(); // a valid key, but never seen by this isolate
    expect((await api("/v1/me", { ip, key, env: limits })).status).toBe(429);
    expect(limiter.names.filter((name) => name.startsWith("key:")).length).toBe(objectsBefore);
  });

  it("a valid key touches its address's bucket once per isolate (its first request); then no extra Durable Object call", async () => {
    const { key } = await createApiKey();
    const ip = freshAddress();
    const limiter = recordingLimiter();
    const limits = { IP_RATE_LIMIT_MAX: "2", RATE_LIMITER: limiter.ns };
    for (let i = 0; i < 5; i++) {
      const res = await api("/v1/me", { ip, key, env: limits });
      expect(res.status).toBe(200);
    }
    const keyObject = keyObjectName(await hashApiKey(key));
    expect(limiter.names).toEqual([clientBucket(ip), ...Array(5).fill(keyObject)]);
    // Its address's bucket was counted once: one request of the two left.
    expect(rateHeaders((await api("/v1/health", { ip, env: limits })).headers)).toMatchObject({ limit: "2", remaining: "0" });
  });

  it("a key used outside its IP allowlist (403) is counted once (its first request), a key in the URL (400) never", async () => {
    const { key } = await createApiKey({ allowIps: ["203.0.113.7"] });
    const ip = freshAddress();
    const limits = { IP_RATE_LIMIT_MAX: "2" };
    for (let i = 0; i < 3; i++) {
      expect((await api("/v1/me", { ip, key, env: limits })).status).toBe(403);
      expect((await api(`/v1/me?api_key=x`, { ip, env: limits })).status).toBe(400);
    }
    const last = await api("/v1/me", { ip, env: limits });
    expect(last.status).toBe(401);
    expect(rateHeaders(last.headers)).toMatchObject({ limit: "2", remaining: "0" });
  });

  it("a limiter that cannot answer leaves a 401 a 401 (without RateLimit headers)", async () => {
    const hit = vi.fn(() => {
      throw Object.assign(new Error("Durable Object is overloaded."), { retryable: true, overloaded: true });
    });
    const res = await api("/v1/me", { ip: freshAddress(), key: unknownKey(), env: { RATE_LIMITER: fakeLimiter(hit) } });
    expect(res.status).toBe(401);
    expect(res.headers.get("RateLimit-Limit")).toBeNull();
    expect(hit).toHaveBeenCalledTimes(1);
  });
});
