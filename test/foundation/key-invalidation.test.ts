// Authentication without D1 on the request's path: each key's Durable Object holds the key's record (its row and its
// tenant's) and is told of every change (core/keys/key-object.ts `KeyCache`), so a change holds from the next request
// on, under races too. Changes through the dashboard are in test/dashboard/keys.test.ts and profile.test.ts; through
// the operator CLI against a running dev server in test/cli/key-cache.check.ts.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/core/keys/api-key.ts";
import { keyObject } from "../../src/core/keys/key-object.ts";
import { editKey, pauseKey, revokeKey } from "../../src/core/keys/management.ts";
import type { AuthorizeRequest } from "../../src/core/keys/record.ts";
import type { RateLimiter } from "../../src/core/rate-limit/durable-object.ts";
import { changeTenantProfile, changeTenantWallet } from "../../src/core/tenants.ts";
import { api } from "../support/client.ts";
import { createApiKey, createTenant, db, keys, randomWallet } from "../support/factories.ts";
import { lateD1 } from "../support/fake-bindings.ts";

// 100 clients racing a revoke over real sockets: test/browser/key-revoke-race.test.ts.
describe("a revoke racing a read of the key", () => {
  it("a read of the key that D1 answered before the revoke, but that arrives after it, is not used", async () => {
    const { key, row } = await createApiKey();
    const keyHash = await hashApiKey(key);
    const request: AuthorizeRequest = { keyHash, clientIp: undefined, limit: 1000, windowMs: 60_000 };
    const stub = keyObject(env, keyHash);
    const answer = await runInDurableObject(stub, async (instance: RateLimiter) => {
      const object = instance as unknown as { env: Env };
      const realEnv = object.env;
      // The object's binding, replaced as the client replaces the Worker's: its key read answers late.
      const late = lateD1(/from "api_keys"/);
      object.env = { ...realEnv, DB: late.db };
      try {
        const pending = instance.authorize(request);
        await late.reached(1); // D1 answered "active"; the answer is on its way
        await revokeKey({ db: db(), cache: { forget: async () => instance.forget() } }, { id: row.id });
        late.release();
        return await pending;
      } finally {
        object.env = realEnv;
      }
    });
    // Judged after the revoke returned: on what D1 held then.
    expect(answer).toMatchObject({ kind: "refused", reason: "revoked" });
    expect((await api("/v1/me", { key })).body.code).toBe("KEY_REVOKED");
  });
});

describe("every change holds from the next request on", () => {
  it("pause, edit (scopes, allowlist, expiry): the next request sees each", async () => {
    const tenant = await createTenant();
    const { key, row } = await createApiKey({ tenant });
    expect((await api("/v1/services", { key })).status).toBe(200);
    await editKey(keys(), {
      id: row.id,
      tenant: tenant.id,
      name: "narrowed",
      scopes: "events:read",
      expiresAt: null,
      allowIps: "203.0.113.7",
    });
    expect((await api("/v1/services", { key, ip: "203.0.113.7" })).body.code).toBe("INSUFFICIENT_SCOPE");
    expect((await api("/v1/me", { key, ip: "192.0.2.1" })).body.code).toBe("IP_NOT_ALLOWED");
    expect((await api("/v1/me", { key, ip: "203.0.113.7" })).body.data.apiKey.name).toBe("narrowed");
    await pauseKey(keys(), { id: row.id });
    expect((await api("/v1/me", { key, ip: "203.0.113.7" })).body.code).toBe("KEY_INACTIVE");
  });

  it("the tenant's name, e-mail and wallets (embedded in the record): the next request of each of its keys sees them", async () => {
    const tenant = await createTenant();
    const a = await createApiKey({ tenant });
    const b = await createApiKey({ tenant });
    for (const k of [a, b]) expect((await api("/v1/me", { key: k.key })).body.data.user.name).toBe(tenant.name);
    await changeTenantProfile(keys(), tenant.id, { name: "Renamed", email: `renamed-${tenant.id}@example.com` }, new Date());
    const wallet = randomWallet();
    await changeTenantWallet(keys(), tenant.id, "walletAddress", wallet, new Date());
    for (const k of [a, b]) {
      expect((await api("/v1/me", { key: k.key })).body.data.user).toMatchObject({ name: "Renamed", walletAddress: wallet });
    }
  });
});
