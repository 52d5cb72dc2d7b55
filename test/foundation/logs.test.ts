import { env } from "cloudflare:workers";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { createRouter } from "../../src/api/router.ts";
import { accessLog } from "../../src/core/http/access-log.ts";
import { renderError } from "../../src/core/http/render.ts";
import { requestId } from "../../src/core/http/request-id.ts";
import { findKeyWithTenantByHash } from "../../src/db/api-keys.ts";
import { getDb } from "../../src/db/client.ts";
import { type ApiResult, api, read } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import { createApiKey } from "../support/factories.ts";
import { failingDb, fakeLimiter } from "../support/fake-bindings.ts";

const CANARY = "canary-7f3e9a1c5b2d4e6f";

/** The one log line of the response's request. */
function lineOf(entries: Record<string, unknown>[], res: ApiResult) {
  const id = res.headers.get("X-Request-Id");
  const lines = entries.filter((e) => e.requestId === id);
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("access log", () => {
  it("writes exactly one JSON line per request, naming the key and tenant by id", async () => {
    const { key, row, tenant } = await createApiKey();
    const logs = consoleOutput();
    const res = await api("/v1/me", { key });
    expect(res.status).toBe(200);
    expect(logs.lines).toHaveLength(1);
    const line = lineOf(logs.entries(), res);
    expect(line).toEqual({
      requestId: res.headers.get("X-Request-Id"),
      method: "GET",
      path: "/v1/me",
      status: 200,
      durationMs: expect.any(Number),
      keyId: row.id,
      tenantId: tenant.id,
    });
    expect(line.durationMs as number).toBeGreaterThanOrEqual(0);
  });

  it("logs each of several requests once, with its own id", async () => {
    const { key } = await createApiKey();
    const logs = consoleOutput();
    const responses = [await api("/v1/me", { key }), await api("/v1/health"), await api("/v1/me"), await api("/nope")];
    expect(logs.lines).toHaveLength(4);
    const entries = logs.entries();
    expect(responses.map((r) => lineOf(entries, r).status)).toEqual([200, 200, 401, 404]);
  });

  it("a refused request is logged with its status and code, and no key or tenant", async () => {
    const logs = consoleOutput();
    const res = await api("/v1/me", { key: "mpk_nope" });
    expect(lineOf(logs.entries(), res)).toMatchObject({ status: 401, error: "INVALID_API_KEY", keyId: null, tenantId: null });
  });

  it("logs the path without its query string", async () => {
    const { key } = await createApiKey();
    const logs = consoleOutput();
    const res = await api(`/v1/me?token=${CANARY}`, { key });
    expect(lineOf(logs.entries(), res).path).toBe("/v1/me");
    expect(logs.lines.join("\n")).not.toContain(CANARY);
  });

  it("never writes a raw key or its hash, whatever the outcome", async () => {
    const good = await createApiKey({ allowIps: ["203.0.113.7"] });
    const other = await createApiKey();
    const revoked = await createApiKey({ status: "revoked" });
    const logs = consoleOutput();
    const limits = { RATE_LIMIT_MAX: "1", RATE_LIMIT_WINDOW_SECONDS: "60" };
    const statuses = [
      (await api("/v1/me", { key: good.key, ip: "203.0.113.7" })).status,
      (await api("/v1/me", { key: good.key, ip: "192.0.2.1" })).status,
      (await api("/v1/me", { key: good.key, ip: "203.0.113.7", headers: { "x-api-key": other.key } })).status,
      (await api("/v1/me", { key: revoked.key })).status,
      (await api("/v1/me", { key: other.key, env: limits })).status,
      (await api("/v1/me", { key: other.key, env: limits })).status,
      (await api("/v1/services", { key: other.key, env: { DB: failingDb() } })).status,
    ];
    expect(statuses).toEqual([200, 403, 401, 401, 200, 429, 500]);
    const text = logs.lines.join("\n");
    for (const k of [good, other, revoked]) {
      expect(text).not.toContain(k.key);
      expect(text).not.toContain(k.key.slice(4));
      expect(text).not.toContain(k.row.keyHash);
    }
  });

  it("a server error is written to console.error", async () => {
    const { key } = await createApiKey();
    const logs = consoleOutput();
    const res = await api("/v1/services", { key, env: { DB: failingDb() } });
    expect(res.status).toBe(500);
    expect(logs.at("error")).toHaveLength(1);
    expect(logs.at("log")).toEqual([]);
    expect(JSON.parse(logs.at("error")[0] as string)).toMatchObject({ status: 500, error: "DATABASE_ERROR" });
  });

  it("a limiter outage is logged as a 503 with its own code", async () => {
    const { key } = await createApiKey();
    const logs = consoleOutput();
    const res = await api("/v1/me", {
      key,
      env: {
        RATE_LIMITER: fakeLimiter(() => {
          throw new Error(`limiter down ${CANARY}`);
        }),
      },
    });
    expect(res.status).toBe(503);
    expect(lineOf(logs.entries(), res)).toMatchObject({ status: 503, error: expect.any(String) });
    expect(logs.lines.join("\n")).not.toContain(CANARY);
    expect(res.text).not.toContain(CANARY);
  });
});

describe("database errors leak nothing", () => {
  it("a D1 failure whose message carries a secret → 500 DATABASE_ERROR, generic message, secret nowhere", async () => {
    const { key, row } = await createApiKey();
    const logs = consoleOutput();
    const res = await api("/v1/services", { key, env: { DB: failingDb(`D1_ERROR: no such column: ${CANARY}: SQLITE_ERROR`) } });
    const text = res.text;
    const body = JSON.parse(text);
    expect(res.status).toBe(500);
    expect(Object.keys(body).sort()).toEqual(["code", "error", "meta"]);
    expect(body.code).toBe("DATABASE_ERROR");
    expect(body.meta.requestId).toBe(res.headers.get("X-Request-Id"));
    const everything = `${text}\n${[...res.headers].join("\n")}\n${logs.lines.join("\n")}`;
    // drizzle's error message holds the SQL and the bound parameters; D1's holds the canary.
    for (const secret of [CANARY, row.keyHash, key, "list_versions", "select", "params:", "Failed query", "SQLITE", "D1_ERROR"]) {
      expect(everything.toLowerCase()).not.toContain(secret.toLowerCase());
    }
    expect(lineOf(logs.entries(), res)).toMatchObject({ status: 500, error: "DATABASE_ERROR" });
  });

  it("the error drizzle actually throws (DrizzleQueryError, params in its message) is recognised and hidden", async () => {
    const { key, row } = await createApiKey();
    // No "D1_"/"SQLITE" in D1's message: only drizzle's wrapper marks this as a database failure.
    const db = failingDb(`Network connection lost (${CANARY})`);

    // Not vacuous: the error the app receives does carry the SQL, the key's hash and the canary.
    const thrown = await findKeyWithTenantByHash(getDb(db), row.keyHash).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(DrizzleQueryError);
    expect((thrown as Error).message).toContain(row.keyHash);
    expect(String((thrown as Error).cause)).toContain(CANARY);

    const logs = consoleOutput();
    const res = await api("/v1/services", { key, env: { DB: db } });
    const text = res.text;
    expect(res.status).toBe(500);
    expect(JSON.parse(text)).toMatchObject({ code: "DATABASE_ERROR" });
    const everything = `${text}\n${logs.lines.join("\n")}`;
    expect(everything).not.toContain(CANARY);
    expect(everything).not.toContain(row.keyHash);
    expect(everything).not.toMatch(/Failed query|params:/);
  });

  it("an unexpected error → 500 INTERNAL_ERROR with a generic message; its text and stack are not logged", async () => {
    const app = createRouter();
    app.use("*", requestId(), accessLog());
    app.get("/boom", () => {
      throw new Error(`something broke near ${CANARY}`);
    });
    app.get("/boom-cause", () => {
      throw new Error("outer", { cause: new Error(`inner ${CANARY}`) });
    });
    app.onError(renderError);
    const logs = consoleOutput();
    for (const path of ["/boom", "/boom-cause"]) {
      const res = await read(await app.fetch(new Request(`https://api.test${path}`), env));
      const { text } = res;
      expect(res.status).toBe(500);
      expect(JSON.parse(text)).toMatchObject({ code: "INTERNAL_ERROR", error: "An internal error occurred" });
      expect(text).not.toContain(CANARY);
      expect(text).not.toMatch(/\.ts:\d+|at /);
      expect(lineOf(logs.entries(), res)).toMatchObject({ status: 500, error: "INTERNAL_ERROR" });
    }
    expect(logs.lines.join("\n")).not.toContain(CANARY);
  });
});
