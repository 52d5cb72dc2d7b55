// Idempotency-Key on every write under /v1: a retry replays the stored answer and writes nothing; another request
// with the key is 422; a key in use is 409; refusals store nothing; the answer is stored in the write's own batch
// (a fault between them leaves neither); records are per tenant, masked, kept 24 hours, and cleaned up by the cron.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from "../../src/api/middleware/idempotency.ts";
import worker from "../../src/index.ts";
import { type ApiResult, api } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import { createApiKey, unknownKey } from "../support/factories.ts";
import { fakeLimiter, gatedD1 } from "../support/fake-bindings.ts";
import {
  type Actor,
  actor,
  CANARY,
  createPaywall,
  createService,
  expectError,
  expectInvalid,
  proxyPaywallBody,
  rawRow,
  routePaywallBody,
  serviceBody,
} from "../support/resources.ts";

let counter = 0;
/** A fresh key string; the same string is used across tenants where a test says so. */
const newKey = (label = "k") => `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

interface Write {
  method?: string;
  body?: unknown;
  key?: string;
  headers?: Record<string, string>;
}
const write = (who: Actor | string, path: string, { method = "POST", body, key, headers = {} }: Write) =>
  api(path, {
    key: typeof who === "string" ? who : who.key,
    method,
    ...(body === undefined ? {} : { body }),
    headers: { ...headers, ...(key === undefined ? {} : { "idempotency-key": key }) },
  });

const count = async (table: "services" | "paywalls", tenantId: string) =>
  (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`).bind(tenantId).first<{ n: number }>())?.n;

/** The raw stored record of a tenant's key, or null. */
const record = (tenantId: string, key: string) =>
  env.DB.prepare("SELECT * FROM idempotency_keys WHERE tenant_id = ? AND key = ?")
    .bind(tenantId, key)
    .first<Record<string, unknown>>();

const replayed = (r: ApiResult) => r.headers.get("idempotent-replayed");

/** The second answer is the first, replayed: same status, same bytes, same ETag, marked as a replay. */
function expectReplay(first: ApiResult, again: ApiResult) {
  expect(again.status, again.text).toBe(first.status);
  expect(again.text).toBe(first.text);
  expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
  expect(again.headers.get("content-type")).toMatch(/^application\/json/);
  expect(replayed(first)).toBeNull();
  expect(replayed(again)).toBe("true");
}

describe("a retry with the same key replays the stored answer and writes nothing", () => {
  it("POST /v1/services: one service, the identical 201 twice, the second marked Idempotent-Replayed", async () => {
    const who = await actor();
    const key = newKey();
    const first = await write(who, "/v1/services", { body: serviceBody(), key });
    expect(first.status, first.text).toBe(201);
    const again = await write(who, "/v1/services", { body: serviceBody(), key });
    expectReplay(first, again);
    expect(again.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await count("services", who.tenant.id)).toBe(1);
    // The answer is the service as stored.
    const read = await api(`/v1/services/${first.body.data.id}`, { key: who.key });
    expect(read.body.data).toEqual(first.body.data);
    expect(read.headers.get("etag")).toBe(first.headers.get("etag"));
  });

  it("POST /v1/paywalls: one paywall, the identical 201 twice", async () => {
    const who = await actor();
    const key = newKey();
    const body = proxyPaywallBody();
    const first = await write(who, "/v1/paywalls", { body, key });
    expect(first.status, first.text).toBe(201);
    expectReplay(first, await write(who, "/v1/paywalls", { body, key }));
    expect(await count("paywalls", who.tenant.id)).toBe(1);
    expect((await api(`/v1/paywalls/${first.body.data.id}`, { key: who.key })).body.data).toEqual(first.body.data);
  });

  it.each([
    { kind: "service", path: "/v1/services", table: "services" as const },
    { kind: "paywall", path: "/v1/paywalls", table: "paywalls" as const },
  ])("PATCH and DELETE of a $kind: replayed, the version bumped once, the row deleted once", async ({ kind, path, table }) => {
    const who = await actor();
    const id = kind === "service" ? (await createService(who)).id : (await createPaywall(who, proxyPaywallBody())).id;
    const patchKey = newKey();
    const first = await write(who, `${path}/${id}`, { method: "PATCH", body: { name: "renamed" }, key: patchKey });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("etag")).toBe('"v2"');
    expectReplay(first, await write(who, `${path}/${id}`, { method: "PATCH", body: { name: "renamed" }, key: patchKey }));
    expect((await rawRow(table, id))?.version).toBe(2);
    // The answer built before the write is the resource as stored.
    const read = await api(`${path}/${id}`, { key: who.key });
    expect(read.body.data).toEqual(first.body.data);
    expect(read.headers.get("etag")).toBe(first.headers.get("etag"));

    const deleteKey = newKey();
    const gone = await write(who, `${path}/${id}`, { method: "DELETE", key: deleteKey });
    expect(gone.status, gone.text).toBe(200);
    expect(await rawRow(table, id)).toBeNull();
    // Without the key, a second DELETE is 404; with it, the first answer.
    expectError(await write(who, `${path}/${id}`, { method: "DELETE" }), 404, "NOT_FOUND");
    expectReplay(gone, await write(who, `${path}/${id}`, { method: "DELETE", key: deleteKey }));
  });

  it("the same JSON with its keys reordered and spaced differently is the same request: replayed", async () => {
    const who = await actor();
    const key = newKey();
    const body = serviceBody({ categories: ["b", "a"], authConfig: { bearerToken: CANARY } });
    const first = await write(who, "/v1/services", { body, key });
    expect(first.status, first.text).toBe(201);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const text = JSON.stringify(reordered, null, 3);
    expect(text).not.toBe(JSON.stringify(body));
    expectReplay(first, await write(who, "/v1/services", { body: text, key }));
    expect(await count("services", who.tenant.id)).toBe(1);
    // Array order is part of the body: another order is another request.
    const swapped = await write(who, "/v1/services", { body: { ...body, categories: ["a", "b"] }, key });
    expectError(swapped, 422, "IDEMPOTENCY_KEY_REUSED");
  });

  it("a request without the key is never replayed: two POSTs without one create two services", async () => {
    const who = await actor();
    expect((await write(who, "/v1/services", { body: serviceBody() })).status).toBe(201);
    expect((await write(who, "/v1/services", { body: serviceBody() })).status).toBe(201);
    expect(await count("services", who.tenant.id)).toBe(2);
  });
});

describe("the key with another request is 422 IDEMPOTENCY_KEY_REUSED and writes nothing", () => {
  it("another body, another path, another method", async () => {
    const who = await actor();
    const key = newKey();
    const first = await write(who, "/v1/services", { body: serviceBody({ name: "first" }), key });
    expect(first.status, first.text).toBe(201);
    const id = first.body.data.id;
    const stored = await record(who.tenant.id, key);

    const otherBody = await write(who, "/v1/services", { body: serviceBody({ name: "second" }), key });
    expectError(otherBody, 422, "IDEMPOTENCY_KEY_REUSED");
    expect(otherBody.body.error).toMatch(/body differs/);
    const otherPath = await write(who, "/v1/paywalls", { body: proxyPaywallBody(), key });
    expectError(otherPath, 422, "IDEMPOTENCY_KEY_REUSED");
    const otherMethod = await write(who, `/v1/services/${id}`, { method: "PATCH", body: { name: "x" }, key });
    expectError(otherMethod, 422, "IDEMPOTENCY_KEY_REUSED");
    const deleteIt = await write(who, `/v1/services/${id}`, { method: "DELETE", key });
    expectError(deleteIt, 422, "IDEMPOTENCY_KEY_REUSED");
    for (const r of [otherBody, otherPath, otherMethod, deleteIt]) expect(replayed(r)).toBeNull();

    expect(await count("services", who.tenant.id)).toBe(1);
    expect(await count("paywalls", who.tenant.id)).toBe(0);
    expect((await rawRow("services", id))?.name).toBe("first");
    expect((await rawRow("services", id))?.version).toBe(1);
    expect(await record(who.tenant.id, key)).toEqual(stored);
    // And the first request still replays.
    expectReplay(first, await write(who, "/v1/services", { body: serviceBody({ name: "first" }), key }));
  });
});

describe("keys are the tenant's", () => {
  it("another tenant sending the same key string and body gets its own fresh result, never the first tenant's", async () => {
    const a = await actor();
    const b = await actor();
    const key = newKey("shared");
    const first = await write(a, "/v1/services", { body: serviceBody(), key });
    const other = await write(b, "/v1/services", { body: serviceBody(), key });
    expect(first.status).toBe(201);
    expect(other.status, other.text).toBe(201);
    expect(replayed(other)).toBeNull();
    expect(other.body.data.id).not.toBe(first.body.data.id);
    expect(other.body.data.userId).toBe(b.tenant.id);
    expect(other.text).not.toContain(a.tenant.id);
    expect(other.text).not.toContain(first.body.data.id);
    expect(await count("services", b.tenant.id)).toBe(1);
    // Each replays its own.
    expectReplay(first, await write(a, "/v1/services", { body: serviceBody(), key }));
    expectReplay(other, await write(b, "/v1/services", { body: serviceBody(), key }));
  });

  it("two keys of one tenant share its records: a retry through another key of the tenant is replayed", async () => {
    const a = await actor();
    const { key: second } = await createApiKey({ tenant: a.tenant });
    const key = newKey();
    const first = await write(a, "/v1/services", { body: serviceBody(), key });
    expectReplay(first, await write(second, "/v1/services", { body: serviceBody(), key }));
    expect(await count("services", a.tenant.id)).toBe(1);
  });
});

/** A keyed `POST /v1/services` that has claimed its key and waits at the gate before its write batch. */
async function heldCreate(who: Actor, key: string) {
  const gated = gatedD1();
  const held = api("/v1/services", {
    key: who.key,
    method: "POST",
    body: serviceBody(),
    headers: { "idempotency-key": key },
    env: { DB: gated.db },
  });
  await gated.reached(1);
  return { held, gated };
}

describe("concurrent requests with one key", () => {
  it("8 at once → exactly one write; the others are 409 IDEMPOTENCY_IN_PROGRESS with Retry-After, or the replay", async () => {
    const who = await actor();
    const key = newKey();
    const race = await Promise.all(Array.from({ length: 8 }, () => write(who, "/v1/services", { body: serviceBody(), key })));
    const fresh = race.filter((r) => r.status === 201 && replayed(r) === null);
    expect(fresh, race.map((r) => `${r.status} ${r.body.code ?? ""}`).join(", ")).toHaveLength(1);
    const winner = fresh[0] as ApiResult;
    for (const r of race.filter((r) => r !== winner)) {
      if (r.status === 201) expectReplay(winner, r);
      else {
        expectError(r, 409, "IDEMPOTENCY_IN_PROGRESS");
        const seconds = Number(r.headers.get("retry-after"));
        expect(seconds).toBeGreaterThanOrEqual(1);
        expect(seconds).toBeLessThanOrEqual(IDEMPOTENCY_LEASE_MS / 1000);
      }
    }
    expect(await count("services", who.tenant.id)).toBe(1);
  });

  it("8 concurrent PATCHes with one key bump the version once", async () => {
    const who = await actor();
    const svc = await createService(who);
    const key = newKey();
    const race = await Promise.all(
      Array.from({ length: 8 }, () => write(who, `/v1/services/${svc.id}`, { method: "PATCH", body: { name: "once" }, key })),
    );
    expect(race.filter((r) => r.status === 200 && replayed(r) === null)).toHaveLength(1);
    for (const r of race) expect([200, 409]).toContain(r.status);
    expect((await rawRow("services", svc.id))?.version).toBe(2);
  });

  it("a key in progress answers 409 with Retry-After until its lease ends; then a retry takes the key over, and the first request, which lost it, writes nothing", async () => {
    const clock = useTestClock();
    const who = await actor();
    const key = newKey();
    // The first request claims the key, then its write batch waits at the gate.
    const { held, gated } = await heldCreate(who, `${key}-held`);
    expect((await record(who.tenant.id, `${key}-held`))?.state).toBe("in_progress");

    const busy = await write(who, "/v1/services", { body: serviceBody(), key: `${key}-held` });
    expectError(busy, 409, "IDEMPOTENCY_IN_PROGRESS");
    expect(Number(busy.headers.get("retry-after"))).toBe(IDEMPOTENCY_LEASE_MS / 1000);

    clock.advance(IDEMPOTENCY_LEASE_MS / 2);
    const stillBusy = await write(who, "/v1/services", { body: serviceBody(), key: `${key}-held` });
    expect(Number(stillBusy.headers.get("retry-after"))).toBe(IDEMPOTENCY_LEASE_MS / 2000);
    // A different request is still refused as a reuse, in progress or not.
    expectError(
      await write(who, "/v1/services", { body: serviceBody({ name: "other" }), key: `${key}-held` }),
      422,
      "IDEMPOTENCY_KEY_REUSED",
    );

    clock.advance(IDEMPOTENCY_LEASE_MS / 2 + 1);
    const takeover = await write(who, "/v1/services", { body: serviceBody(), key: `${key}-held` });
    expect(takeover.status, takeover.text).toBe(201);
    expect(replayed(takeover)).toBeNull();

    gated.release();
    const late = await held;
    // A clear refusal, not a database error: the key now belongs to the retry, whose answer it replays.
    expectError(late, 409, "CONFLICT");
    expect(late.body.error).toMatch(/lease/);
    // One service from this key: the takeover's. The late request's write was refused with its lost claim.
    expect(await count("services", who.tenant.id)).toBe(1);
    expect(await rawRow("services", takeover.body.data.id)).not.toBeNull();
    expectReplay(takeover, await write(who, "/v1/services", { body: serviceBody(), key: `${key}-held` }));
  });
});

describe("a write and its stored answer land together, whatever a retry did to the key meanwhile", () => {
  it("the key taken over by a retry and given back (the retry was refused): the first request takes it again with its write, and a retry replays that answer", async () => {
    const who = await actor();
    const key = newKey();
    const { held, gated } = await heldCreate(who, key);
    // What a retry after the lease leaves when its own handler refuses: it took the key, then released it.
    await env.DB.prepare("DELETE FROM idempotency_keys WHERE tenant_id = ? AND key = ?").bind(who.tenant.id, key).run();
    gated.release();
    const first = await held;
    expect(first.status, first.text).toBe(201);
    expect(await count("services", who.tenant.id)).toBe(1);
    expect((await record(who.tenant.id, key))?.state).toBe("done");
    // Not a second service: the stored answer, replayed.
    expectReplay(first, await write(who, "/v1/services", { body: serviceBody(), key }));
    expect(await count("services", who.tenant.id)).toBe(1);
  });
});

describe("an answer built before the write is the state the write leaves", () => {
  it("a keyed PATCH whose resource changed between its read and its write is 409 CONFLICT, stores nothing, and its retry answers the stored state", async () => {
    const who = await actor();
    const pw = await createPaywall(who, proxyPaywallBody());
    const key = newKey();
    const gated = gatedD1();
    const keyed = api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { name: "keyed" },
      headers: { "idempotency-key": key },
      env: { DB: gated.db },
    });
    await gated.reached(1); // read done, write held
    const other = await write(who, `/v1/paywalls/${pw.id}`, { method: "PATCH", body: { price: "777" } });
    expect(other.status, other.text).toBe(200);
    gated.release();
    expectError(await keyed, 409, "CONFLICT");
    expect(await record(who.tenant.id, key)).toBeNull();
    expect(await rawRow("paywalls", pw.id)).toMatchObject({ name: "Forecast", price: "777", version: 2 });

    const retry = await write(who, `/v1/paywalls/${pw.id}`, { method: "PATCH", body: { name: "keyed" }, key });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.data).toMatchObject({ name: "keyed", price: "777" });
    expect((await api(`/v1/paywalls/${pw.id}`, { key: who.key })).body.data).toEqual(retry.body.data);
  });
});

describe("the answer is stored in the write's own batch: a fault between them leaves neither", () => {
  const TRIGGER = "idempotency_fault_test";
  afterEach(async () => {
    await env.DB.exec(`DROP TRIGGER IF EXISTS ${TRIGGER}`);
  });
  /** Makes the recording of `key` fail inside its batch, as a crash between the write and the stored answer would. */
  const failRecordingOf = (key: string) =>
    env.DB.exec(
      `CREATE TRIGGER ${TRIGGER} BEFORE UPDATE ON idempotency_keys WHEN NEW.key = '${key}' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );

  it("POST /v1/services: the recording fails → no service, no record; the same retry then succeeds once", async () => {
    const who = await actor();
    const key = newKey("fault");
    await failRecordingOf(key);
    const failed = await write(who, "/v1/services", { body: serviceBody(), key });
    expectError(failed, 500, "DATABASE_ERROR");
    expect(await count("services", who.tenant.id)).toBe(0);
    expect(await record(who.tenant.id, key)).toBeNull();

    await env.DB.exec(`DROP TRIGGER ${TRIGGER}`);
    const retry = await write(who, "/v1/services", { body: serviceBody(), key });
    expect(retry.status, retry.text).toBe(201);
    expect(replayed(retry)).toBeNull();
    expectReplay(retry, await write(who, "/v1/services", { body: serviceBody(), key }));
    expect(await count("services", who.tenant.id)).toBe(1);
  });

  it.each([
    { kind: "service", path: "/v1/services", table: "services" as const },
    { kind: "paywall", path: "/v1/paywalls", table: "paywalls" as const },
  ])("PATCH and DELETE of a $kind: the recording fails → the row is unchanged", async ({ kind, path, table }) => {
    const who = await actor();
    const id = kind === "service" ? (await createService(who)).id : (await createPaywall(who, proxyPaywallBody())).id;
    const before = await rawRow(table, id);
    const key = newKey("fault");
    await failRecordingOf(key);
    expectError(await write(who, `${path}/${id}`, { method: "PATCH", body: { name: "lost" }, key }), 500, "DATABASE_ERROR");
    expect(await rawRow(table, id)).toEqual(before);
    const deleteKey = newKey("fault");
    await env.DB.exec(`DROP TRIGGER ${TRIGGER}`);
    await failRecordingOf(deleteKey);
    expectError(await write(who, `${path}/${id}`, { method: "DELETE", key: deleteKey }), 500, "DATABASE_ERROR");
    expect(await rawRow(table, id)).toEqual(before);
    expect(await record(who.tenant.id, key)).toBeNull();
    expect(await record(who.tenant.id, deleteKey)).toBeNull();
  });

  it("POST /v1/paywalls: the recording fails → no paywall", async () => {
    const who = await actor();
    const key = newKey("fault");
    await failRecordingOf(key);
    expectError(await write(who, "/v1/paywalls", { body: proxyPaywallBody(), key }), 500, "DATABASE_ERROR");
    expect(await count("paywalls", who.tenant.id)).toBe(0);
  });
});

describe("refusals store nothing: a corrected retry with the same key works", () => {
  it("401 (no or unknown key), 403 (scope), 400 (body), 429 (rate limit); then the corrected request with the key succeeds", async () => {
    const who = await actor();
    const { key: readOnly } = await createApiKey({ tenant: who.tenant, scopes: ["services:read"] });
    const key = newKey();
    expectError(
      await api("/v1/services", { method: "POST", body: serviceBody(), headers: { "idempotency-key": key } }),
      401,
      "INVALID_API_KEY",
    );
    expectError(await write(unknownKey(), "/v1/services", { body: serviceBody(), key }), 401, "INVALID_API_KEY");
    expectError(await write(readOnly, "/v1/services", { body: serviceBody(), key }), 403, "INSUFFICIENT_SCOPE");
    expectInvalid(await write(who, "/v1/services", { body: serviceBody({ mode: "nope" }), key }), "mode");
    expectError(await write(who, "/v1/services", { body: "{not json", key }), 400, "VALIDATION_ERROR");
    // Another key of the tenant (a key seen over its limit stays refused in this isolate until its window ends).
    const { key: busyKey } = await createApiKey({ tenant: who.tenant });
    expect((await api("/v1/me", { key: busyKey })).status).toBe(200); // known to this isolate: no address count first
    const limited = await api("/v1/services", {
      key: busyKey,
      method: "POST",
      body: serviceBody(),
      headers: { "idempotency-key": key },
      env: { RATE_LIMITER: fakeLimiter((limit) => ({ allowed: false, limit, remaining: 0, resetAt: Date.now() + 30_000 })) },
    });
    expectError(limited, 429, "RATE_LIMITED");
    expect(await record(who.tenant.id, key)).toBeNull();
    expect(await count("services", who.tenant.id)).toBe(0);
    const ok = await write(who, "/v1/services", { body: serviceBody(), key });
    expect(ok.status, ok.text).toBe(201);
    expect(replayed(ok)).toBeNull();
  });

  it("a malformed Idempotency-Key is 400 VALIDATION_ERROR naming the header, and nothing is written", async () => {
    const who = await actor();
    for (const bad of ["x".repeat(256), "del\u007f", "tab\there", ""]) {
      const res = await write(who, "/v1/services", { body: serviceBody(), key: bad });
      expectInvalid(res, "idempotency-key", /printable ASCII/);
      expect(res.body.details).toHaveLength(1);
    }
    // The longest and the widest keys are accepted.
    for (const good of ["x".repeat(255), " !\"#$%&'()*+,-./0-9:;<=>?@A-Z[\\]^_`a-z{|}~"]) {
      const res = await write(who, "/v1/services", { body: serviceBody(), key: good });
      expect(res.status, res.text).toBe(201);
    }
    expect(await count("services", who.tenant.id)).toBe(2);
  });

  it("a handler's refusal (404 on PATCH of a missing paywall, 409 slug taken, 412 stale tag) stores nothing", async () => {
    const who = await actor();
    const key = newKey();
    expectError(
      await write(who, "/v1/paywalls/pw_000000000000000000000000", { method: "PATCH", body: { name: "x" }, key }),
      404,
      "NOT_FOUND",
    );
    expect(await record(who.tenant.id, key)).toBeNull();
    // The key is free: used now for a request that succeeds (another path: no 422).
    const pw = await createPaywall(who, proxyPaywallBody());
    const ok = await write(who, `/v1/paywalls/${pw.id}`, { method: "PATCH", body: { name: "x" }, key });
    expect(ok.status, ok.text).toBe(200);

    const stale = newKey();
    expectError(
      await write(who, `/v1/paywalls/${pw.id}`, {
        method: "PATCH",
        body: { name: "y" },
        key: stale,
        headers: { "if-match": '"v1"' },
      }),
      412,
      "PRECONDITION_FAILED",
    );
    expect(await record(who.tenant.id, stale)).toBeNull();
    const fixed = await write(who, `/v1/paywalls/${pw.id}`, {
      method: "PATCH",
      body: { name: "y" },
      key: stale,
      headers: { "if-match": '"v2"' },
    });
    expect(fixed.status, fixed.text).toBe(200);

    const taken = newKey();
    const body = routePaywallBody((await createService(who)).id);
    await createPaywall(who, body);
    expectError(await write(who, "/v1/paywalls", { body, key: taken }), 409, "CONFLICT");
    expect(await record(who.tenant.id, taken)).toBeNull();
  });
});

describe("what is stored", () => {
  it("the stored body of a service create is the masked answer: `***`, never the secret", async () => {
    const who = await actor();
    const key = newKey();
    const res = await write(who, "/v1/services", { body: serviceBody(), key });
    expect(res.status).toBe(201);
    const row = await record(who.tenant.id, key);
    expect(row).toMatchObject({ state: "done", response_status: 201, method: "POST", path: "/v1/services" });
    expect(row?.response_body).toBe(res.text);
    expect(JSON.parse(row?.response_body as string).data.authConfig).toEqual({ bearerToken: "***" });
    expect(JSON.stringify(row)).not.toContain(CANARY);
    expect(JSON.parse(row?.response_headers as string)).toEqual({ ETag: res.headers.get("etag") });
    expect(row?.expires_at).toBe((row?.created_at as number) + IDEMPOTENCY_TTL_MS);
  });
});

describe("24 hours, then gone", () => {
  it("a record older than 24 hours is not replayed: the same request is processed again", async () => {
    const clock = useTestClock();
    const who = await actor();
    const key = newKey();
    const first = await write(who, "/v1/services", { body: serviceBody(), key });
    clock.advance(IDEMPOTENCY_TTL_MS - 1);
    expectReplay(first, await write(who, "/v1/services", { body: serviceBody(), key }));
    clock.advance(1);
    const later = await write(who, "/v1/services", { body: serviceBody(), key });
    expect(later.status, later.text).toBe(201);
    expect(replayed(later)).toBeNull();
    expect(later.body.data.id).not.toBe(first.body.data.id);
    // An expired record is not a reuse either: another body with the key is processed.
    clock.advance(IDEMPOTENCY_TTL_MS);
    const other = await write(who, "/v1/services", { body: serviceBody({ name: "other" }), key });
    expect(other.status, other.text).toBe(201);
  });

  it("the Cron Trigger deletes expired records and keeps the others", async () => {
    const clock = useTestClock();
    const who = await actor();
    const old = newKey();
    const young = newKey();
    await write(who, "/v1/services", { body: serviceBody(), key: old });
    clock.advance(IDEMPOTENCY_TTL_MS / 2);
    await write(who, "/v1/services", { body: serviceBody(), key: young });
    clock.advance(IDEMPOTENCY_TTL_MS / 2);
    expect(await record(who.tenant.id, old)).not.toBeNull();
    await worker.scheduled(createScheduledController({ scheduledTime: clock.now(), cron: "17 * * * *" }), env);
    expect(await record(who.tenant.id, old)).toBeNull();
    expect(await record(who.tenant.id, young)).not.toBeNull();
  });
});
