// Fault injection (adversarial suite, item 5).
//
// D1 fails in production with transient errors ("Network connection lost.", "D1 DB is overloaded.", storage
// timeouts) and does not retry writes. Every statement a write endpoint sends is failed in turn, with each of
// those errors: the client gets `500 DATABASE_ERROR` with a request id and a generic message, nothing is
// written in part, no SQL, parameter or secret reaches the response or the log, and the same request retried
// against a healthy D1 succeeds. The rate limiter's Durable Object failing is the documented fail-closed 503.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/core/keys/api-key.ts";
import { keyObject } from "../../src/core/keys/key-object.ts";
import type { RateLimitDecision } from "../../src/core/keys/record.ts";
import { outcomeEventIdOf, requestEventIdOf } from "../../src/core/ledger/ids.ts";
import { completePayment, failPayment, type PaymentRef, type PaymentStart, startPayment } from "../../src/core/ledger/ledger.ts";
import type { RateLimiter } from "../../src/core/rate-limit/durable-object.ts";
import { getDb } from "../../src/db/client.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";
import { type ApiResult, api } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import { createApiKey, insertRows, paywallRow, serviceRow } from "../support/factories.ts";
import {
  type D1Call,
  type D1Fault,
  d1Error,
  everyCall,
  type FaultPosition,
  fakeLimiter,
  faultPositions,
  faultyD1,
  MAIN_FAULTS,
  ruleAt,
  sqlMatching,
} from "../support/fake-bindings.ts";
import { type Actor, CANARY, serviceBody, uniqueSlug } from "../support/resources.ts";

/** Sent as a name: echoed by a successful response, but never by an error body or a log line. */
const NAME_CANARY = "name-canary-3b9e71d4";
/** The secret canary of resources.ts, never seen anywhere (checked for the whole file in `afterAll`). */
const SECRET = `${CANARY}-faults`;

/** The loops below make hundreds of requests; under a loaded CI machine they need more than the default 5 s. */
const SLOW = 120_000;

const TABLES = ["services", "paywalls", "api_keys", "transactions", "events", "account_events"] as const;

/** Everything stored for the tenant, read through the real binding (the key's `last_used_at` is bookkeeping, left out). */
async function snapshot(tenantId: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  out.tenants = (await env.DB.prepare("SELECT * FROM tenants WHERE id = ?").bind(tenantId).all()).results;
  for (const table of TABLES) {
    const rows = (await env.DB.prepare(`SELECT * FROM ${table} WHERE tenant_id = ? ORDER BY id`).bind(tenantId).all()).results;
    out[table] = rows.map(({ last_used_at: _ignored, ...row }) => row);
  }
  return out;
}

/** A tenant with an all-scope key whose `lastUsedAt` is fresh, so requests make no bookkeeping write. */
async function quietActor(): Promise<Actor> {
  const { key, tenant, row } = await createApiKey();
  await env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").bind(Date.now(), row.id).run();
  // Used once through the real bindings: its object holds its record, and this isolate knows it (no address count).
  const first = await api("/v1/me", { key, env: {} });
  if (first.status !== 200) throw new Error(`quietActor: ${first.status} ${first.text}`);
  return { key, tenant };
}

async function seedService(who: Actor, paywalls: number, overrides: Parameters<typeof serviceRow>[2] = {}) {
  const serviceId = newId("svc");
  await insertRows("services", [serviceRow(who.tenant.id, serviceId, overrides)]);
  const paywallIds = Array.from({ length: paywalls }, () => newId("pw"));
  if (paywallIds.length) {
    await insertRows(
      "paywalls",
      paywallIds.map((id) =>
        paywallRow(who.tenant, id, { serviceId, targetType: "ROUTE", targetUrl: null, targetRoute: "/r", slug: uniqueSlug() }),
      ),
    );
  }
  return { serviceId, paywallIds };
}

/** What changed between two snapshots, table by table (empty when nothing did). */
function changes(before: Record<string, unknown[]>, after: Record<string, unknown[]>): string[] {
  const key = (row: unknown) => JSON.stringify(row);
  return Object.keys(before).flatMap((table) => {
    const was = new Set((before[table] ?? []).map(key));
    const now = new Set((after[table] ?? []).map(key));
    const added = [...now].filter((r) => !was.has(r)).length;
    const removed = [...was].filter((r) => !now.has(r)).length;
    return added || removed ? [`${table}: ${added} row(s) written, ${removed} row(s) gone or changed`] : [];
  });
}

const count = async (sql: string, ...params: unknown[]) =>
  (
    (await env.DB.prepare(sql)
      .bind(...params)
      .first<{ n: number }>()) ?? { n: -1 }
  ).n;

// ---- one scenario per endpoint ----

interface Request {
  path: string;
  method: string;
  body?: unknown;
}

interface Scenario<F> {
  name: string;
  setup(who: Actor): Promise<F>;
  request(fixture: F): Request;
  /** Status of the request on a healthy D1. */
  ok: number;
  /** What a successful run stored (checked after the retry). */
  verify(who: Actor, fixture: F, res: ApiResult): Promise<void>;
}

const scenario = <F>(s: Scenario<F>) => s as Scenario<unknown>;

const SCENARIOS: Scenario<unknown>[] = [
  scenario({
    name: "POST /v1/services",
    setup: async () => undefined,
    request: () => ({
      path: "/v1/services",
      method: "POST",
      body: serviceBody({ name: NAME_CANARY, authConfig: { bearerToken: SECRET } }),
    }),
    ok: 201,
    verify: async (who, _f, res) => {
      expect(await count("SELECT count(*) AS n FROM services WHERE tenant_id = ?", who.tenant.id)).toBe(1);
      expect(await count("SELECT count(*) AS n FROM services WHERE id = ? AND name = ?", res.body.data.id, NAME_CANARY)).toBe(1);
    },
  }),
  scenario({
    name: "PATCH /v1/services/:id (name and secret, with paywalls)",
    setup: (who) => seedService(who, 2),
    request: (f) => ({
      path: `/v1/services/${f.serviceId}`,
      method: "PATCH",
      body: { name: NAME_CANARY, authMethod: "bearer", authConfig: { bearerToken: SECRET } },
    }),
    ok: 200,
    verify: async (_who, f) => {
      const row = await env.DB.prepare("SELECT name, auth_method, auth_config FROM services WHERE id = ?")
        .bind(f.serviceId)
        .first();
      expect(row).toMatchObject({ name: NAME_CANARY, auth_method: "bearer" });
      expect(String(row?.auth_config)).toMatch(/"bearerToken":"v1\./);
      expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", f.serviceId)).toBe(2);
    },
  }),
  scenario({
    name: "PATCH /v1/services/:id (mode change, checks its paywalls)",
    setup: (who) => seedService(who, 0),
    request: (f) => ({ path: `/v1/services/${f.serviceId}`, method: "PATCH", body: { mode: "mainnet", networks: ["base"] } }),
    ok: 200,
    verify: async (_who, f) => {
      expect(await env.DB.prepare("SELECT mode, networks FROM services WHERE id = ?").bind(f.serviceId).first()).toEqual({
        mode: "mainnet",
        networks: '["base"]',
      });
    },
  }),
  scenario({
    name: "DELETE /v1/services/:id (with paywalls)",
    setup: (who) => seedService(who, 3),
    request: (f) => ({ path: `/v1/services/${f.serviceId}`, method: "DELETE" }),
    ok: 200,
    verify: async (_who, f) => {
      expect(await count("SELECT count(*) AS n FROM services WHERE id = ?", f.serviceId)).toBe(0);
      expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", f.serviceId)).toBe(0);
    },
  }),
  scenario({
    name: "POST /v1/paywalls (in a service, with a secret header)",
    setup: (who) => seedService(who, 1),
    request: (f) => ({
      path: "/v1/paywalls",
      method: "POST",
      body: {
        slug: "fault-slug",
        name: NAME_CANARY,
        targetType: "ROUTE",
        targetRoute: "/v1/forecast",
        serviceId: f.serviceId,
        price: "10000",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
        headers: [{ key: "X-Upstream-Token", value: SECRET }],
      },
    }),
    ok: 201,
    verify: async (_who, f) => {
      expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", f.serviceId)).toBe(2);
      expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ? AND slug = 'fault-slug'", f.serviceId)).toBe(1);
    },
  }),
  scenario({
    name: "PATCH /v1/paywalls/:id (moves service, secret header)",
    setup: async (who) => {
      const a = await seedService(who, 1);
      const b = await seedService(who, 0);
      return { paywallId: a.paywallIds[0] as string, target: b.serviceId };
    },
    request: (f) => ({
      path: `/v1/paywalls/${f.paywallId}`,
      method: "PATCH",
      body: { name: NAME_CANARY, serviceId: f.target, headers: [{ key: "X-Upstream-Token", value: SECRET }] },
    }),
    ok: 200,
    verify: async (_who, f) => {
      const row = await env.DB.prepare("SELECT name, service_id, headers FROM paywalls WHERE id = ?").bind(f.paywallId).first();
      expect(row).toMatchObject({ name: NAME_CANARY, service_id: f.target });
      expect(String(row?.headers)).toMatch(/"value":"v1\./);
    },
  }),
  scenario({
    name: "DELETE /v1/paywalls/:id",
    setup: (who) => seedService(who, 2),
    request: (f) => ({ path: `/v1/paywalls/${f.paywallIds[0]}`, method: "DELETE" }),
    ok: 200,
    verify: async (_who, f) => {
      expect(await count("SELECT count(*) AS n FROM paywalls WHERE id = ?", f.paywallIds[0])).toBe(0);
      expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", f.serviceId)).toBe(1);
    },
  }),
  scenario({
    name: "GET /v1/services (list with embedded paywalls)",
    setup: (who) => seedService(who, 2),
    request: () => ({ path: "/v1/services?limit=10", method: "GET" }),
    ok: 200,
    verify: async (_who, f, res) => {
      expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([f.serviceId]);
      expect(res.body.data[0].Paywall).toHaveLength(2);
    },
  }),
  scenario({
    name: "GET /v1/paywalls?serviceId= (ownership check, then page)",
    setup: (who) => seedService(who, 2),
    request: (f) => ({ path: `/v1/paywalls?serviceId=${f.serviceId}`, method: "GET" }),
    ok: 200,
    verify: async (_who, _f, res) => {
      expect(res.body.data).toHaveLength(2);
      expect(res.body.meta.pagination.total).toBe(2);
    },
  }),
];

// ---- assertions shared by every injected fault ----

const SQL_TEXT = /Failed query|params:|\bselect\b[^.]*\bfrom\b|insert into|delete from|update "|D1_ERROR|SQLITE_| {4}at /i;

/** The response is the generic database error, and it and its log lines hold no SQL, parameter or secret. */
function expectGenericDatabaseError(res: ApiResult, logs: string[], who: Actor, code = "DATABASE_ERROR") {
  expect({ status: res.status, code: res.body?.code }, res.text).toEqual({ status: 500, code });
  expect(res.body).toEqual({
    error: expect.any(String),
    code,
    meta: { requestId: expect.stringMatching(/^req_[0-9a-f]+$/), timestamp: expect.any(String) },
  });
  expect(res.headers.get("X-Request-Id")).toBe(res.body.meta.requestId);
  for (const text of [res.text, ...logs]) {
    expect(text).not.toMatch(SQL_TEXT);
    expect(text).not.toContain(NAME_CANARY);
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain(who.key);
    expect(text).not.toMatch(/overloaded|connection lost|exceeded timeout/i);
  }
  const access = logs.flatMap((line) => {
    try {
      const entry = JSON.parse(line);
      return entry?.requestId === res.body.meta.requestId ? [entry] : [];
    } catch {
      return [];
    }
  });
  expect(access, logs.join("\n")).toEqual([expect.objectContaining({ status: 500, error: code })]);
}

/** Calls the app with this D1 binding and returns the response with the log lines written meanwhile. */
async function send(db: D1Database, who: Actor, req: Request) {
  const output = consoleOutput();
  const res = await api(req.path, { key: who.key, method: req.method, body: req.body, env: { DB: db } });
  return { res, logs: output.lines };
}

/** The D1 calls of one healthy run of the scenario (on its own fixture). */
async function recordCalls(s: Scenario<unknown>): Promise<D1Call[]> {
  const who = await quietActor();
  const fixture = await s.setup(who);
  const recorder = faultyD1(env.DB);
  const { res } = await send(recorder.db, who, s.request(fixture));
  expect(res.status, res.text).toBe(s.ok);
  return recorder.calls;
}

/**
 * Fails `position` with `fault` on a fresh fixture: the generic error, nothing stored changed, and the
 * same request on a healthy D1 succeeds.
 */
async function injectAndRetry(s: Scenario<unknown>, position: FaultPosition, fault: D1Fault, code?: string) {
  const who = await quietActor();
  const fixture = await s.setup(who);
  const before = await snapshot(who.tenant.id);
  const faulty = faultyD1(env.DB, [ruleAt(position, fault)]);
  const req = s.request(fixture);
  const { res, logs } = await send(faulty.db, who, req);
  expect(
    faulty.injected.map((c) => c.index),
    `fault at ${position.label} was not reached`,
  ).toEqual([position.call]);
  expectGenericDatabaseError(res, logs, who, code);
  expect(changes(before, await snapshot(who.tenant.id)), `partial write after a fault at ${position.label}`).toEqual([]);

  const retry = await api(req.path, { key: who.key, method: req.method, body: req.body, env: {} });
  expect(retry.status, `retry after ${position.label}: ${retry.text}`).toBe(s.ok);
  await s.verify(who, fixture, retry);
}

const D1_ERRORS: D1Fault[] = MAIN_FAULTS.filter((f) => f !== "disconnected");

describe("D1 faults at every statement of every endpoint", () => {
  for (const s of SCENARIOS) {
    it(
      `${s.name}: each statement failing with each D1 error → 500 DATABASE_ERROR, nothing partial, retry succeeds`,
      async () => {
        const positions = faultPositions(await recordCalls(s));
        // The key lookup, the handler's statements, and every statement inside each batch.
        expect(positions.length).toBeGreaterThanOrEqual(2);
        for (const position of positions) {
          for (const fault of D1_ERRORS) await injectAndRetry(s, position, fault);
        }
      },
      SLOW,
    );
  }

  it("a write endpoint's batch statements are what the fault positions cover (service create: insert + cap check + its account event in one batch)", async () => {
    const calls = await recordCalls(SCENARIOS[0] as Scenario<unknown>);
    const batch = calls.find((c) => c.method === "batch");
    expect(batch?.sql).toEqual([
      expect.stringMatching(/^insert into "services"/),
      expect.stringMatching(/^delete from "services"/),
      expect.stringMatching(/^insert into "account_events"/),
    ]);
    // Nothing else writes: authentication reads no D1 in the Worker (the key's object holds its record).
    expect(calls.filter((c) => c !== batch)).toEqual([]);
  });
});

describe("a connection lost before D1 answers (the runtime's error, without a D1_ prefix)", () => {
  // workerd's D1 binding lets a failed fetch to D1 through unchanged: `Error("Network connection lost.")`
  // with `retryable = true`. Drizzle wraps it for a single statement (DrizzleQueryError), not for a batch.
  for (const s of SCENARIOS) {
    it(
      `${s.name}: → 500, generic, nothing partial, retry succeeds`,
      async () => {
        for (const position of faultPositions(await recordCalls(s))) {
          const who = await quietActor();
          const fixture = await s.setup(who);
          const before = await snapshot(who.tenant.id);
          const faulty = faultyD1(env.DB, [ruleAt(position, "disconnected")]);
          const req = s.request(fixture);
          const { res, logs } = await send(faulty.db, who, req);
          expect(faulty.injected).toHaveLength(1);
          expect(["DATABASE_ERROR", "INTERNAL_ERROR"]).toContain(res.body?.code);
          expectGenericDatabaseError(res, logs, who, res.body.code);
          expect(changes(before, await snapshot(who.tenant.id)), `partial write after a fault at ${position.label}`).toEqual([]);
          const retry = await api(req.path, { key: who.key, method: req.method, body: req.body, env: {} });
          expect(retry.status, retry.text).toBe(s.ok);
        }
      },
      SLOW,
    );
  }

  // drizzle passes a failed batch through unwrapped, even a bare "Network connection lost." from the runtime:
  // src/db/client.ts marks it as D1's so it is DATABASE_ERROR, not INTERNAL_ERROR.
  describe("POST /v1/services whose batch loses the connection", () => {
    let outcome: { injected: number; status: number; code: string } | undefined;
    beforeAll(async () => {
      const who = await quietActor();
      const faulty = faultyD1(env.DB, [{ match: (c) => c.method === "batch", fault: "disconnected" }]);
      const { res } = await send(faulty.db, who, { path: "/v1/services", method: "POST", body: serviceBody() });
      outcome = { injected: faulty.injected.length, status: res.status, code: res.body?.code };
    });

    it("reaches the batch and fails with 500", () => {
      expect(outcome).toMatchObject({ injected: 1, status: 500 });
    });

    it("→ DATABASE_ERROR", () => {
      expect(outcome?.code).toBe("DATABASE_ERROR");
    });
  });
});

describe("a write D1 committed whose answer was lost", () => {
  // D1 does not retry writes, and the client cannot tell whether a failed write happened: whatever it
  // did is whole. (No idempotency keys: a retried create makes a second service.)
  it("service create: the client sees DATABASE_ERROR; the stored service is complete and readable", async () => {
    for (const fault of D1_ERRORS) {
      const who = await quietActor();
      const faulty = faultyD1(env.DB, [{ match: (c) => c.method === "batch", fault, timing: "after" }]);
      const req = {
        path: "/v1/services",
        method: "POST",
        body: serviceBody({ name: NAME_CANARY, authConfig: { bearerToken: SECRET } }),
      };
      const { res, logs } = await send(faulty.db, who, req);
      expectGenericDatabaseError(res, logs, who);
      const list = await api("/v1/services", { key: who.key, env: {} });
      expect(list.body.data).toEqual([
        expect.objectContaining({ name: NAME_CANARY, authMethod: "bearer", authConfig: { bearerToken: "***" } }),
      ]);
    }
  });

  it("service delete: the service and every paywall of it are gone together", async () => {
    for (const fault of D1_ERRORS) {
      const who = await quietActor();
      const { serviceId } = await seedService(who, 3);
      const faulty = faultyD1(env.DB, [{ match: sqlMatching(/^delete from "services"/), fault, timing: "after" }]);
      const { res, logs } = await send(faulty.db, who, { path: `/v1/services/${serviceId}`, method: "DELETE" });
      expectGenericDatabaseError(res, logs, who);
      expect(await count("SELECT count(*) AS n FROM services WHERE id = ?", serviceId)).toBe(0);
      expect(await count("SELECT count(*) AS n FROM paywalls WHERE service_id = ?", serviceId)).toBe(0);
    }
  });
});

describe("bookkeeping writes off the critical path", () => {
  it("a failed lastUsedAt update does not fail the request and leaks nothing", async () => {
    const { key, tenant, row } = await createApiKey();
    const keyHash = await hashApiKey(key);
    const output = consoleOutput();
    // The key's object writes lastUsedAt (off the request's path); its D1 binding, replaced, fails that write.
    const res = await runInDurableObject(keyObject(env, keyHash), async (instance: RateLimiter) => {
      const object = instance as unknown as { env: Env };
      const realEnv = object.env;
      const faulty = faultyD1(env.DB, [{ match: sqlMatching(/^update "api_keys"/), fault: "overloaded" }]);
      object.env = { ...realEnv, DB: faulty.db };
      try {
        const answer = await instance.authorize({ keyHash, clientIp: undefined, limit: 1000, windowMs: 60_000 });
        await scheduler.wait(50); // the write runs in the object's waitUntil
        expect(faulty.injected).toHaveLength(1);
        return answer;
      } finally {
        object.env = realEnv;
      }
    });
    expect(res).toMatchObject({ kind: "admitted", key: { keyId: row.id, tenant: expect.objectContaining({ id: tenant.id }) } });
    expect((await api("/v1/me", { key })).status).toBe(200);
    for (const line of output.lines) expect(line).not.toMatch(SQL_TEXT);
  });
});

describe("GET /v1/health with a failing D1", () => {
  it("each D1 error → 503 {status: degraded}; the next healthy check → 200", async () => {
    for (const fault of MAIN_FAULTS) {
      const faulty = faultyD1(env.DB, [{ match: everyCall, fault }]);
      const sick = await api("/v1/health", { env: { DB: faulty.db } });
      expect(sick.status, sick.text).toBe(503);
      expect(sick.body).toEqual({
        data: { status: "degraded", checks: { database: "error", facilitators: expect.any(Array) } },
        meta: { requestId: sick.headers.get("X-Request-Id"), timestamp: expect.any(String) },
      });
      expect(sick.text).not.toMatch(SQL_TEXT);
      expect(faulty.injected).toHaveLength(1);
      const healthy = await api("/v1/health", { env: { DB: faulty.db } });
      expect(healthy.status).toBe(200);
    }
  });
});

// ---- the payment ledger (the gateway's writes) ----

/** A recorded-but-not-started payment of a fresh paywall: the ledger's `start`, then `complete` or `fail`. */
async function paymentFixture() {
  const who = await quietActor();
  const { paywallIds } = await seedService(who, 1, { networks: ["base-sepolia"] });
  const transactionId = `txn_x402_${randomHex(20)}`;
  const ref: PaymentRef = {
    transactionId,
    tenantId: who.tenant.id,
    paywallId: paywallIds[0] as string,
    serviceId: null,
    protocol: "x402",
    network: "base-sepolia",
    amount: "1000",
  };
  const start: PaymentStart = {
    ...ref,
    currency: "USDC",
    payer: `0x${randomHex(20)}`,
    method: "GET",
    pending: {
      reference: `0x${randomHex(32)}`,
      validBefore: new Date(Date.now() + 60_000),
      asset: `0x${randomHex(20)}`,
      payTo: `0x${randomHex(20)}`,
    },
  };
  return { ref, start };
}

/** What the payment's moves wrote: its transaction, its events and its pending row. */
async function stored(transactionId: string) {
  const rows = (sql: string, ...params: string[]) =>
    env.DB.prepare(sql)
      .bind(...params)
      .all()
      .then((r) => r.results);
  return {
    transaction: await rows("SELECT status, tx_hash, failure_reason FROM transactions WHERE id = ?", transactionId),
    events: await rows(
      "SELECT event_type FROM events WHERE id IN (?, ?) ORDER BY event_type",
      requestEventIdOf(transactionId),
      outcomeEventIdOf(transactionId),
    ),
    pending: (await rows("SELECT transaction_id FROM pending_payments WHERE transaction_id = ?", transactionId)).length,
  };
}

describe("the payment ledger under D1 faults: every move is stored whole or not at all", () => {
  const moves = {
    start: (db: D1Database, f: Awaited<ReturnType<typeof paymentFixture>>) => startPayment(getDb(db), f.start),
    complete: (db: D1Database, f: Awaited<ReturnType<typeof paymentFixture>>) =>
      completePayment(getDb(db), f.ref, `0x${randomHex(32)}`, { statusCode: 200, responseTime: 5 }),
    fail: (db: D1Database, f: Awaited<ReturnType<typeof paymentFixture>>) =>
      failPayment(getDb(db), f.ref, "upstream answered 502", { statusCode: 502, responseTime: 5 }),
  };
  for (const move of ["start", "complete", "fail"] as const) {
    it(
      `${move}: every statement failing → the move throws, writes all or nothing, and a retry moves exactly once`,
      async () => {
        const ready = async () => {
          const f = await paymentFixture();
          if (move !== "start") await moves.start(env.DB, f);
          return f;
        };
        const probe = await ready();
        const recorder = faultyD1(env.DB);
        expect(await moves[move](recorder.db, probe)).toBe(true);
        const positions = faultPositions(recorder.calls);
        expect(positions.length).toBeGreaterThan(1); // one batch: each of its statements is a fault position

        for (const position of positions) {
          for (const fault of MAIN_FAULTS) {
            const f = await ready();
            const before = await stored(f.ref.transactionId);
            const faulty = faultyD1(env.DB, [ruleAt(position, fault)]);
            const error = await moves[move](faulty.db, f).then(
              () => undefined,
              (e: unknown) => e,
            );
            expect(error, `no failure at ${position.label}`).toBeInstanceOf(Error);
            const after = await stored(f.ref.transactionId);
            // Nothing in part: either the move is wholly there (the fault hit after the commit) or not at all.
            const retried = await moves[move](env.DB, f);
            const final = await stored(f.ref.transactionId);
            if (JSON.stringify(after) === JSON.stringify(before)) expect(retried, position.label).toBe(true);
            else expect([retried, JSON.stringify(after)], position.label).toEqual([false, JSON.stringify(final)]);
            expect(await moves[move](env.DB, f)).toBe(false);
          }
        }
      },
      SLOW,
    );
  }
});

// ---- the rate limiter's Durable Object failing ----

type Hit = (limit: number, windowMs: number) => RateLimitDecision;

const allow: Hit = (limit, windowMs) => ({ allowed: true, limit, remaining: limit - 1, resetAt: Date.now() + windowMs });
const doError = (message: string, props: { retryable?: boolean; overloaded?: boolean }) =>
  Object.assign(new Error(message), props);

async function throughLimiter(ns: unknown, req: Request = { path: "/v1/me", method: "GET" }) {
  const who = await quietActor();
  const output = consoleOutput();
  const res = await api(req.path, {
    key: who.key,
    method: req.method,
    body: req.body,
    env: { RATE_LIMITER: ns },
  });
  return { who, res, logs: output.lines };
}

function expectFailClosed(res: ApiResult, logs: string[]) {
  expect(res.status, res.text).toBe(503);
  expect(res.body).toEqual({
    error: expect.any(String),
    code: "SERVICE_UNAVAILABLE",
    meta: { requestId: res.headers.get("X-Request-Id"), timestamp: expect.any(String) },
  });
  expect(res.headers.get("Retry-After")).toBe("1");
  expect(res.text).not.toMatch(/overloaded|connection lost|reset/i);
  const access = logs.map((l) => JSON.parse(l)).find((e) => e.requestId === res.body.meta.requestId);
  expect(access).toMatchObject({ status: 503, error: "RATE_LIMITER_UNAVAILABLE" });
}

describe("rate limiter faults", () => {
  it("a retryable error once, then an answer → 200 after exactly one retry", async () => {
    let calls = 0;
    const namespace = fakeLimiter((limit, windowMs) => {
      if (calls++ === 0) throw doError("Network connection lost.", { retryable: true });
      return allow(limit, windowMs);
    });
    const { res } = await throughLimiter(namespace);
    expect(res.status, res.text).toBe(200);
    expect(namespace.stats.hit).toBe(2);
    expect(res.headers.get("RateLimit-Limit")).toBe("1000");
  });

  for (const message of ["Network connection lost.", "Durable Object reset because its code was updated."]) {
    it(`"${message}" (retryable) every time → 503 SERVICE_UNAVAILABLE, Retry-After: 1, after one retry`, async () => {
      const namespace = fakeLimiter(() => {
        throw doError(message, { retryable: true });
      });
      const { res, logs } = await throughLimiter(namespace);
      expectFailClosed(res, logs);
      expect(namespace.stats.hit).toBe(2);
    });
  }

  it("overloaded (even if also marked retryable) → 503 without a retry", async () => {
    for (const props of [{ overloaded: true }, { overloaded: true, retryable: true }]) {
      const namespace = fakeLimiter(() => {
        throw doError("Durable Object is overloaded. Too many requests queued.", props);
      });
      const { res, logs } = await throughLimiter(namespace);
      expectFailClosed(res, logs);
      expect(namespace.stats.hit).toBe(1);
    }
  });

  it("a non-retryable error, or a namespace that cannot make a stub → 503 without a retry", async () => {
    const plain = fakeLimiter(() => {
      throw new Error("internal error; reference = 0123456789abcdef");
    });
    const r1 = await throughLimiter(plain);
    expectFailClosed(r1.res, r1.logs);
    expect(plain.stats.hit).toBe(1);

    const broken = {
      idFromName: () => {
        throw doError("Durable Object namespace unavailable", { retryable: true });
      },
      get: () => {
        throw new Error("unreachable");
      },
    };
    const r2 = await throughLimiter(broken);
    expectFailClosed(r2.res, r2.logs);
  });

  it("fails closed: a refused write request reaches no handler and writes nothing", async () => {
    const namespace = fakeLimiter(() => {
      throw doError("Durable Object is overloaded. Too many requests queued.", { overloaded: true });
    });
    const who = await quietActor();
    const before = await snapshot(who.tenant.id);
    const recorder = faultyD1(env.DB);
    const res = await api("/v1/services", {
      key: who.key,
      method: "POST",
      body: serviceBody(),
      env: { RATE_LIMITER: namespace, DB: recorder.db },
    });
    expect(res.status, res.text).toBe(503);
    expect(changes(before, await snapshot(who.tenant.id))).toEqual([]);
    // Nothing ran in D1: authentication and the rate limit are one call to the key's object, the handler never ran.
    expect(recorder.calls).toEqual([]);
  });
});

describe("the fault injector itself", () => {
  it("throws D1's production errors: D1_ERROR prefix and cause, or the runtime's retryable disconnect", () => {
    const e = d1Error("storageTimeout");
    expect(e.message).toBe("D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset.");
    expect((e.cause as Error).message).toBe("D1 DB storage operation exceeded timeout which caused object to be reset.");
    expect(d1Error("overloaded").message).toBe("D1_ERROR: D1 DB is overloaded. Too many requests queued.");
    expect(d1Error("networkLost").message).toBe("D1_ERROR: Network connection lost.");
    expect(d1Error("disconnected")).toMatchObject({ message: "Network connection lost.", retryable: true });
  });

  it("an `inside` fault runs the batch's earlier statements in D1's transaction, which D1 rolls back", async () => {
    const id = `probe_${randomHex(6)}`;
    const faulty = faultyD1(env.DB, [
      { match: (c) => c.method === "batch", fault: "storageTimeout", timing: "inside", statement: 1 },
    ]);
    const who = await quietActor();
    const insert = faulty.db
      .prepare(
        "INSERT INTO services (id, tenant_id, name, base_url, auth_method, auth_config, networks, mode, categories, public_routes, siwx_routes, created_at, updated_at) VALUES (?, ?, 'x', 'https://a.example', 'none', '{}', '[]', 'testnet', '[]', '[]', '[]', 0, 0)",
      )
      .bind(id, who.tenant.id);
    const second = faulty.db.prepare("SELECT 1");
    await expect(faulty.db.batch([insert, second])).rejects.toThrow("D1_ERROR: D1 DB storage operation exceeded timeout");
    expect(await count("SELECT count(*) AS n FROM services WHERE id = ?", id)).toBe(0);
    // The same batch, healthy, stores the row: the statement was sound.
    await faulty.db.batch([insert, second]);
    expect(await count("SELECT count(*) AS n FROM services WHERE id = ?", id)).toBe(1);
  });
});
