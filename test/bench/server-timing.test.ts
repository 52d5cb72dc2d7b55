// The Server-Timing accounting the benchmark relies on: counts D1 statements (each statement of a batch too) and
// Durable Object calls when SERVER_TIMING=on, and stays out of the way when off.
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/api/env.ts";
import { serverTiming } from "../../src/core/http/server-timing.ts";
import { getDb } from "../../src/db/client.ts";
import { apiKeys, tenants } from "../../src/db/schema.ts";
import { parseServerTiming } from "./server-timing-header.ts";

const seen: Env[] = [];

const app = new Hono<AppEnv>();
app.use("*", serverTiming());
app.get("/work", async (c) => {
  seen.push(c.env);
  const db = getDb(c.env.DB);
  await db.select().from(tenants).limit(1); // 1 statement
  await db.batch([db.select().from(tenants).limit(1), db.select().from(apiKeys).limit(1)]); // 2 statements
  await c.env.DB.prepare("SELECT 1 AS one").first("one"); // 1 statement
  const stub = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName("server-timing-test"));
  const decision = await stub.hit(10, 60_000); // 1 DO call
  return c.json({ allowed: decision.allowed });
});
app.get("/channel", async (c) => {
  const { record } = await c.env.CHANNELS.getByName("channel:server-timing-test").state(); // 1 DO call (a session's)
  return c.json({ record });
});
app.get("/fails", async (c) => {
  await c.env.DB.prepare("SELECT * FROM no_such_table").all();
  return c.json({});
});
app.onError((_err, c) => c.json({ error: true }, 500));

const withTiming = (value: "on" | "off") => ({ ...env, SERVER_TIMING: value }) as unknown as Env;

describe("serverTiming", () => {
  it("counts statements (a batch counts each of its statements) and DO calls when on", async () => {
    const on = withTiming("on");
    const res = await app.request("/work", {}, on);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ allowed: true });
    const timing = parseServerTiming(res.headers.get("server-timing"));
    expect(timing).toMatchObject({ statements: 4, doCalls: 1 });
    expect(timing!.d1Ms).toBeGreaterThanOrEqual(0);
    // The request saw a per-request view; the shared env object was left as it was.
    expect(seen.at(-1)).not.toBe(on);
    expect(on.DB).toBe(env.DB);
    expect(on.RATE_LIMITER).toBe(env.RATE_LIMITER);
  });

  it("counts a call on a session channel's object (CHANNELS) as a DO call", async () => {
    const res = await app.request("/channel", {}, withTiming("on"));
    expect(await res.json()).toEqual({ record: null });
    expect(parseServerTiming(res.headers.get("server-timing"))).toMatchObject({ statements: 0, doCalls: 1 });
  });

  it("still reports when the handler fails", async () => {
    const res = await app.request("/fails", {}, withTiming("on"));
    expect(res.status).toBe(500);
    expect(parseServerTiming(res.headers.get("server-timing"))).toMatchObject({ statements: 1, doCalls: 0 });
  });

  it("does nothing when off: no header, the bindings untouched", async () => {
    const off = withTiming("off");
    const res = await app.request("/work", {}, off);
    expect(res.status).toBe(200);
    expect(res.headers.get("server-timing")).toBeNull();
    expect(seen.at(-1)).toBe(off);
  });
});
