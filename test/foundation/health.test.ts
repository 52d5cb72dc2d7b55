import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { failingDb } from "../support/fake-bindings.ts";

describe("GET /v1/health", () => {
  it("answers 200 {status: ok, checks: {database: ok}} without a key", async () => {
    const { status, body, headers } = await api("/v1/health");
    expect(status).toBe(200);
    expect(body).toEqual({
      data: { status: "ok", checks: { database: "ok", facilitators: expect.any(Array) } },
      meta: { requestId: headers.get("X-Request-Id"), timestamp: expect.any(String) },
    });
    expect(headers.get("Cache-Control")).toBe("no-store");
  });

  it("ignores a key, even an invalid one: counted against the client address, never a key", async () => {
    // An address of its own: a small limit on the shared `ip:unknown` bucket would refuse other tests' requests.
    const ip = `2001:db8:${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}::1`;
    const res = await api("/v1/health", { key: "not-a-key", ip, env: { IP_RATE_LIMIT_MAX: "40" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("RateLimit-Limit")).toBe("40");
  });

  it("answers 503 {status: degraded, checks: {database: error}} when D1 fails", async () => {
    const res = await api("/v1/health", { env: { DB: failingDb() } });
    expect(res.status).toBe(503);
    const body = res.body;
    expect(body).toEqual({
      data: { status: "degraded", checks: { database: "error", facilitators: expect.any(Array) } },
      meta: { requestId: res.headers.get("X-Request-Id"), timestamp: expect.any(String) },
    });
  });

  it("answers 503 when the D1 binding throws synchronously", async () => {
    const throwing = {
      prepare: () => {
        throw new Error("D1_ERROR: binding unavailable");
      },
    };
    const res = await api("/v1/health", { env: { DB: throwing } });
    expect(res.status).toBe(503);
    expect(res.body.data.status).toBe("degraded");
  });

  it("lists each configured facilitator per mode, never with credentials or a query string", async () => {
    const res = await api("/v1/health", {
      env: {
        FACILITATOR_URLS_TESTNET: "https://user:pw@one.example/x402?key=secret-key,https://two.example",
        FACILITATOR_URL_MAINNET: "https://main.example/",
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.checks.facilitators).toEqual([
      {
        mode: "testnet",
        url: "https://one.example/x402",
        status: "unknown",
        calls: 0,
        failures: 0,
        latencyMs: null,
        lastFailure: null,
      },
      {
        mode: "testnet",
        url: "https://two.example",
        status: "unknown",
        calls: 0,
        failures: 0,
        latencyMs: null,
        lastFailure: null,
      },
      {
        mode: "mainnet",
        url: "https://main.example",
        status: "unknown",
        calls: 0,
        failures: 0,
        latencyMs: null,
        lastFailure: null,
      },
    ]);
    expect(res.text).not.toMatch(/secret-key|user:pw/);
  });

  it("a health object that cannot be reached leaves the facilitators unknown, still 200", async () => {
    const broken = {
      idFromName: () => {
        throw new Error("binding unavailable");
      },
    };
    const res = await api("/v1/health", { env: { FACILITATOR_HEALTH: broken } });
    expect(res.status).toBe(200);
    expect(res.body.data.checks.facilitators.map((f: { status: string }) => f.status)).toEqual(["unknown", "unknown"]);
  });
});
