// The operator commands (src/admin/commands.ts) against the real D1, then the real Worker answering with the keys they made.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import {
  createKey,
  createTenant,
  demoData,
  listAllTenants,
  listKeys,
  pauseKey,
  removeKey,
  resumeKey,
  revokeKey,
  seedDemo,
} from "../src/admin/commands.ts";
import { ApiError } from "../src/core/http/errors.ts";
import { hashApiKey } from "../src/core/keys/api-key.ts";
import { SCOPES } from "../src/core/keys/scopes.ts";
import { countActiveKeys, MAX_ACTIVE_KEYS_PER_TENANT } from "../src/db/api-keys.ts";
import { getDb } from "../src/db/client.ts";
import { newId } from "../src/lib/ids.ts";
import { api } from "./support/client.ts";
import { createApiKey, keys, randomWallet } from "./support/factories.ts";

const db = () => getDb(env.DB);

const newTenant = (overrides: Partial<Parameters<typeof createTenant>[1]> = {}) =>
  createTenant(db(), {
    email: `${newId("ten")}@example.com`,
    name: "Admin test tenant",
    wallet: randomWallet(),
    ...overrides,
  });

/** The `ApiError` a promise rejects with (fails the test if it resolves or throws something else). */
async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

const me = (key: string, ip?: string) => api("/v1/me", { key, ...(ip ? { ip } : {}) });

describe("tenant create / list", () => {
  it("creates a tenant and returns it with ISO dates; lists it", async () => {
    const wallet = randomWallet();
    const tempo = randomWallet();
    const t = await newTenant({ name: "  Acme  ", wallet, tempoWallet: tempo });
    expect(t).toEqual({
      id: expect.stringMatching(/^ten_[0-9a-f]{24}$/),
      email: expect.stringMatching(/@example\.com$/),
      name: "Acme",
      walletAddress: wallet,
      tempoWalletAddress: tempo,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(await listAllTenants(db())).toContainEqual(t);
  });

  it("refuses a duplicate email with CONFLICT, case-insensitively", async () => {
    const email = `${newId("ten")}@Example.com`;
    await newTenant({ email });
    expect((await rejection(newTenant({ email }))).code).toBe("CONFLICT");
    expect((await rejection(newTenant({ email: email.toUpperCase() }))).code).toBe("CONFLICT");
  });

  it("refuses concurrent creates of one email: exactly one wins", async () => {
    const email = `${newId("ten")}@example.com`;
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => newTenant({ email })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect((r.reason as ApiError).code).toBe("CONFLICT");
  });

  it.each([
    ["email", { email: "not-an-email" }],
    ["name", { name: "" }],
    ["name", { name: "x".repeat(101) }],
    ["wallet", { wallet: "0x123" }],
    ["wallet", { wallet: `0x${"g".repeat(40)}` }],
    ["tempoWallet", { tempoWallet: "1234567890123456789012345678901234567890ab" }],
  ])("refuses an invalid %s with VALIDATION_ERROR", async (path, overrides) => {
    const err = await rejection(newTenant(overrides));
    expect(err.code).toBe("VALIDATION_ERROR");
    expect(err.details).toContainEqual({ path, message: expect.any(String) });
  });
});

describe("key create → the key works on the API", () => {
  it("creates a key that authenticates on GET /v1/me, and prints the raw key only here", async () => {
    const tenant = await newTenant();
    const created = await createKey(db(), { tenant: tenant.id, name: "CI", scopes: "services:read, paywalls:write" });
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^mpk_[0-9a-f]{64}$/),
      keyPrefix: created.key.slice(0, 12),
      name: "CI",
      scopes: ["services:read", "paywalls:write"],
      status: "active",
      expiresAt: null,
      allowedIps: [],
      createdAt: expect.any(String),
    });

    const res = await me(created.key);
    expect(res.status).toBe(200);
    expect(res.body.data.user).toMatchObject({ id: tenant.id, email: tenant.email });
    expect(res.body.data.apiKey).toEqual({
      id: created.id,
      name: "CI",
      keyPrefix: created.keyPrefix,
      scopes: ["services:read", "paywalls:write"],
    });
  });

  it("pause → 401 KEY_INACTIVE on the next request; resume → works again", async () => {
    const tenant = await newTenant();
    const { id, key } = await createKey(db(), { tenant: tenant.id, name: "k", scopes: [...SCOPES] });
    expect((await me(key)).status).toBe(200);

    expect(await pauseKey(keys(), { id })).toMatchObject({ id, status: "paused" });
    const paused = await me(key);
    expect(paused.status).toBe(401);
    expect(paused.body.code).toBe("KEY_INACTIVE");
    expect(await pauseKey(keys(), { id })).toMatchObject({ status: "paused" }); // idempotent

    expect(await resumeKey(keys(), { id })).toMatchObject({ id, status: "active" });
    expect((await me(key)).status).toBe(200);
  });

  it("revoke → 401 KEY_REVOKED; revoking again → ALREADY_REVOKED; pause/resume of a revoked key refused", async () => {
    const tenant = await newTenant();
    const { id, key } = await createKey(db(), { tenant: tenant.id, name: "k", scopes: ["events:read"] });
    expect((await me(key)).status).toBe(200);

    const revoked = await revokeKey(keys(), { id });
    expect(revoked).toMatchObject({ id, status: "revoked", revokedAt: expect.any(String) });
    const res = await me(key);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("KEY_REVOKED");

    expect((await rejection(revokeKey(keys(), { id }))).code).toBe("ALREADY_REVOKED");
    expect((await rejection(pauseKey(keys(), { id }))).code).toBe("ALREADY_REVOKED");
    expect((await rejection(resumeKey(keys(), { id }))).code).toBe("ALREADY_REVOKED");
    expect((await me(key)).body.code).toBe("KEY_REVOKED"); // still revoked
  });

  it("delete → 401 INVALID_API_KEY; deleting again → NOT_FOUND", async () => {
    const tenant = await newTenant();
    const { id, key } = await createKey(db(), { tenant: tenant.id, name: "k", scopes: ["events:read"] });
    expect((await me(key)).status).toBe(200);
    expect(await removeKey(keys(), { id })).toEqual({ id, deleted: true });
    const res = await me(key);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("INVALID_API_KEY");
    expect((await rejection(removeKey(keys(), { id }))).code).toBe("NOT_FOUND");
  });

  it("unknown key ids and tenants → NOT_FOUND", async () => {
    for (const action of [pauseKey, resumeKey, revokeKey, removeKey]) {
      expect((await rejection(action(keys(), { id: "key_000000000000000000000000" }))).code).toBe("NOT_FOUND");
    }
    expect((await rejection(createKey(db(), { tenant: "ten_missing", name: "k", scopes: "events:read" }))).code).toBe(
      "NOT_FOUND",
    );
    expect((await rejection(listKeys(db(), { tenant: "ten_missing" }))).code).toBe("NOT_FOUND");
  });

  it("stores the IP allowlist normalized, and the API enforces it", async () => {
    const tenant = await newTenant();
    const created = await createKey(db(), {
      tenant: tenant.id,
      name: "k",
      scopes: ["events:read"],
      allowIps: " 203.0.113.7 , ::ffff:198.51.100.0/120,2001:DB8:0:0::/32,203.0.113.7",
    });
    expect(created.allowedIps).toEqual(["203.0.113.7/32", "198.51.100.0/24", "2001:db8::/32"]);
    const [listed] = await listKeys(db(), { tenant: tenant.id });
    expect(listed?.allowedIps).toEqual(created.allowedIps);

    expect((await me(created.key, "203.0.113.7")).status).toBe(200);
    expect((await me(created.key, "198.51.100.42")).status).toBe(200);
    expect((await me(created.key, "::ffff:198.51.100.42")).status).toBe(200);
    expect((await me(created.key, "2001:db8::1")).status).toBe(200);
    const refused = await me(created.key, "203.0.113.8");
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("IP_NOT_ALLOWED");
  });

  it("a client address spelled another way never matches; IPv4-mapped does; IPv4-compatible does not", async () => {
    const tenant = await newTenant();
    const created = await createKey(db(), { tenant: tenant.id, name: "k", scopes: ["events:read"], allowIps: "203.0.113.7" });
    expect((await me(created.key, "::ffff:203.0.113.7")).status).toBe(200);
    for (const ip of ["::203.0.113.7", "::ffff:0:203.0.113.7", "203.0.113.07", "0313.0.113.7", "3405803783", "203.0.28935"]) {
      const res = await me(created.key, ip);
      expect({ ip, status: res.status, code: res.body.code }).toEqual({ ip, status: 403, code: "IP_NOT_ALLOWED" });
    }
  });

  it("accepts a future expiry (the key works) and stores it as ISO", async () => {
    const tenant = await newTenant();
    const expiresAt = new Date(Date.now() + 3_600_000);
    const created = await createKey(db(), {
      tenant: tenant.id,
      name: "k",
      scopes: "events:read",
      expiresAt: expiresAt.toISOString(),
    });
    expect(created.expiresAt).toBe(expiresAt.toISOString());
    expect((await me(created.key)).status).toBe(200);
  });

  it("refuses an expiry in the past (or now)", async () => {
    const tenant = await newTenant();
    for (const expiresAt of [new Date(Date.now() - 1000).toISOString(), "2001-01-01T00:00:00+02:00"]) {
      const err = await rejection(createKey(db(), { tenant: tenant.id, name: "k", scopes: "events:read", expiresAt }));
      expect(err.code).toBe("VALIDATION_ERROR");
      expect(err.details).toEqual([{ path: "expiresAt", message: "Must be in the future" }]);
    }
    const now = new Date();
    const err = await rejection(
      createKey(db(), { tenant: tenant.id, name: "k", scopes: "events:read", expiresAt: now.toISOString() }, now),
    );
    expect(err.code).toBe("VALIDATION_ERROR");
    expect(await listKeys(db(), { tenant: tenant.id })).toEqual([]);
  });

  it.each([
    ["scopes", { scopes: "services:read,services:delete" }],
    ["scopes", { scopes: "" }],
    ["scopes", { scopes: [] }],
    ["name", { name: "" }],
    ["name", { name: "n".repeat(101) }],
    ["expiresAt", { expiresAt: "tomorrow" }],
    ["expiresAt", { expiresAt: "2099-01-01T00:00:00" }], // no zone: ambiguous
    ["allowIps", { allowIps: "10.0.0.256" }],
    ["allowIps", { allowIps: ["10.0.0.0/33"] }],
    ["allowIps", { allowIps: "example.com" }],
    ["allowIps", { allowIps: "10.0.0.010" }], // would have been stored as 10.0.0.8/32
    ["allowIps", { allowIps: "1.2.3" }],
    ["allowIps", { allowIps: "0x7f.1" }],
    ["allowIps", { allowIps: "fe80::1%eth0" }],
    ["allowIps", { allowIps: "10.0.0.1/8" }],
  ])("refuses an invalid %s with VALIDATION_ERROR and creates nothing", async (path, overrides) => {
    const tenant = await newTenant();
    const err = await rejection(createKey(db(), { tenant: tenant.id, name: "k", scopes: "events:read", ...overrides }));
    expect(err.code).toBe("VALIDATION_ERROR");
    expect(err.details).toContainEqual({ path, message: expect.any(String) });
    expect(await listKeys(db(), { tenant: tenant.id })).toEqual([]);
  });
});

describe("key list", () => {
  it("lists metadata newest first, never the raw key or its hash", async () => {
    const tenant = await newTenant();
    const a = await createKey(db(), { tenant: tenant.id, name: "a", scopes: "events:read" }, new Date(Date.now() - 1000));
    const b = await createKey(db(), { tenant: tenant.id, name: "b", scopes: "services:write" });
    await revokeKey(keys(), { id: a.id });
    expect((await me(b.key)).status).toBe(200);

    // `lastUsedAt` is written off the request's critical path (waitUntil): wait for it.
    const list = await vi.waitFor(async () => {
      const keys = await listKeys(db(), { tenant: tenant.id });
      expect(keys[0]?.lastUsedAt).not.toBeNull();
      return keys;
    });
    expect(list.map((k) => k.id)).toEqual([b.id, a.id]);
    expect(list[0]).toEqual({
      id: b.id,
      tenantId: tenant.id,
      name: "b",
      keyPrefix: b.keyPrefix,
      scopes: ["services:write"],
      status: "active",
      expired: false,
      expiresAt: null,
      allowedIps: [],
      createdAt: b.createdAt,
      lastUsedAt: expect.any(String),
      revokedAt: null,
    });
    expect(list[1]).toMatchObject({ status: "revoked", revokedAt: expect.any(String), lastUsedAt: null });

    const text = JSON.stringify(list);
    for (const created of [a, b]) {
      expect(text).not.toContain(created.key);
      expect(text).not.toContain(await hashApiKey(created.key));
    }
    expect(text).not.toMatch(/keyHash|key_hash|"key"/);
  });
});

describe("key list: the effective state", () => {
  it("an expired key reads expired whatever its stored state; revoked stays revoked", async () => {
    const tenant = await newTenant();
    const tenantRow = (await db().query.tenants.findFirst({ where: (t, { eq }) => eq(t.id, tenant.id) }))!;
    const past = new Date(Date.now() - 1000);
    const expired = await createApiKey({ tenant: tenantRow, expiresAt: past });
    const pausedThenExpired = await createApiKey({ tenant: tenantRow, expiresAt: past });
    await pauseKey(keys(), { id: pausedThenExpired.row.id });
    const revoked = await createApiKey({ tenant: tenantRow, expiresAt: past });
    await revokeKey(keys(), { id: revoked.row.id });
    const live = await createKey(db(), { tenant: tenant.id, name: "live", scopes: "events:read" });

    const byId = Object.fromEntries((await listKeys(db(), { tenant: tenant.id })).map((k) => [k.id, k]));
    expect(byId[expired.row.id]).toMatchObject({ status: "expired", expired: true });
    expect(byId[pausedThenExpired.row.id]).toMatchObject({ status: "expired", expired: true });
    expect(byId[revoked.row.id]).toMatchObject({ status: "revoked", expired: true });
    expect(byId[live.id]).toMatchObject({ status: "active", expired: false });
    expect((await me(expired.key)).body.code).toBe("KEY_EXPIRED");
  });
});

describe("at most 20 active keys per tenant", () => {
  const create = (tenant: string) => createKey(db(), { tenant, name: "k", scopes: "events:read" });

  it("the 21st key is KEY_LIMIT_REACHED; paused keys count; a revoked or expired key frees a slot", async () => {
    const tenant = await newTenant();
    const created = [];
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_TENANT; i++) created.push(await create(tenant.id));
    await pauseKey(keys(), { id: created[0]!.id });

    const err = await rejection(create(tenant.id));
    expect(err.code).toBe("KEY_LIMIT_REACHED");
    expect(await countActiveKeys(db(), tenant.id, new Date())).toBe(20);

    // A revoked key frees its slot: exactly one more fits.
    await revokeKey(keys(), { id: created[1]!.id });
    await create(tenant.id);
    expect((await rejection(create(tenant.id))).code).toBe("KEY_LIMIT_REACHED");

    // An expired key frees its slot too (made directly: an expiry in the past cannot be created through the command).
    await removeKey(keys(), { id: created[2]!.id });
    const tenantRow = (await db().query.tenants.findFirst({ where: (t, { eq }) => eq(t.id, tenant.id) }))!;
    await createApiKey({ tenant: tenantRow, expiresAt: new Date(Date.now() - 1000) });
    await create(tenant.id);
    expect((await rejection(create(tenant.id))).code).toBe("KEY_LIMIT_REACHED");
    expect(await countActiveKeys(db(), tenant.id, new Date())).toBe(20);
  });

  it("a key that expires later frees its slot when it expires", async () => {
    const tenant = await newTenant();
    const t0 = new Date();
    const soon = new Date(t0.getTime() + 60_000);
    await createKey(db(), { tenant: tenant.id, name: "short-lived", scopes: "events:read", expiresAt: soon.toISOString() }, t0);
    for (let i = 1; i < MAX_ACTIVE_KEYS_PER_TENANT; i++) await create(tenant.id);
    expect((await rejection(create(tenant.id))).code).toBe("KEY_LIMIT_REACHED");
    // At a time after the expiry, the expired key no longer counts.
    const later = new Date(soon.getTime() + 1);
    await createKey(db(), { tenant: tenant.id, name: "k", scopes: "events:read" }, later);
    expect((await rejection(createKey(db(), { tenant: tenant.id, name: "k", scopes: "events:read" }, later))).code).toBe(
      "KEY_LIMIT_REACHED",
    );
  });

  it("concurrent creates never exceed 20", async () => {
    const tenant = await newTenant();
    await create(tenant.id); // one already there: 19 slots left for 25 racers
    const results = await Promise.allSettled(Array.from({ length: 25 }, () => create(tenant.id)));
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(ok).toHaveLength(19);
    expect(refused).toHaveLength(6);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "KEY_LIMIT_REACHED" });
    expect(await countActiveKeys(db(), tenant.id, new Date())).toBe(20);
    expect(await listKeys(db(), { tenant: tenant.id })).toHaveLength(20);
  });

  it("the limit is per tenant", async () => {
    const [a, b] = [await newTenant(), await newTenant()];
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_TENANT; i++) await create(a.id);
    expect((await rejection(create(a.id))).code).toBe("KEY_LIMIT_REACHED");
    await expect(create(b.id)).resolves.toMatchObject({ status: "active" });
  });
});

describe("seedDemo", () => {
  it("seeds only a database without tenants", async () => {
    // Storage is shared by this file's tests, so tenants exist by now.
    expect(await listAllTenants(db())).not.toHaveLength(0);
    expect(await seedDemo(db())).toBeNull();
  });

  it("on an empty database: a demo tenant and a working key with every scope", async () => {
    await env.DB.prepare("DELETE FROM tenants").run(); // cascades to keys (and anything else a tenant owns)
    const seeded = await seedDemo(db());
    expect(seeded).not.toBeNull();
    expect(seeded!.key.scopes).toEqual([...SCOPES]);
    const res = await me(seeded!.key.key);
    expect(res.status).toBe(200);
    expect(res.body.data.user.id).toBe(seeded!.tenant.id);
    expect(await seedDemo(db())).toBeNull();
  });
});

describe("demo-data", () => {
  it("writes a demo service and the requested history for the tenant; refuses unknown tenants and bad counts", async () => {
    const tenant = await newTenant();
    const result = await demoData(db(), { tenant: tenant.id, count: "7" });
    // Every payment has its REQUEST event, and each one that ended (not left PENDING) its outcome event.
    expect(result).toMatchObject({ tenantId: tenant.id, transactions: 7 });
    const pending = await env.DB.prepare("SELECT count(*) AS n FROM transactions WHERE tenant_id = ? AND status = 'PENDING'")
      .bind(tenant.id)
      .first<{ n: number }>();
    expect(result.events).toBe(14 - pending!.n);
    const { key } = await createKey(db(), { tenant: tenant.id, name: "reader", scopes: "transactions:read" });
    const res = await api("/v1/transactions?limit=100", { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(7);

    expect((await rejection(demoData(db(), { tenant: "ten_missing" }))).code).toBe("NOT_FOUND");
    for (const count of ["0", "1.5", "many", 10_001]) {
      expect((await rejection(demoData(db(), { tenant: tenant.id, count }))).code).toBe("VALIDATION_ERROR");
    }
  });
});
