// Helpers for the services and paywalls tests: request bodies, a recording client, error assertions,
// and a console capture that lets every file prove its canary secret never left the Worker.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { expect, vi } from "vitest";
import { createApp } from "../../src/app.ts";
import { paywalls, services, type Tenant } from "../../src/db/schema.ts";
import type { Paywall } from "../../src/routes/paywalls/schemas.ts";
import type { Service } from "../../src/routes/services/schemas.ts";
import { observeResponse } from "./canaries.ts";
import { buildRequest, type CallOptions, call, createApiKey, db } from "./factories.ts";

/** A secret value used in every secret field; it must never appear in a response body or a log line. */
export const CANARY = "canary-5ecret-9d1f6a2b7c";

/** Every response body text and every console line seen by this isolate's tests (per test file). */
export const seen = { bodies: [] as string[], logs: [] as string[] };

// Response bodies are checked by assertions, not by the type system: `any` keeps the tests readable.
// biome-ignore lint/suspicious/noExplicitAny: see above
export type AnyBody = any;

export interface ApiResult<T = AnyBody> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

async function record<T>(res: Response): Promise<ApiResult<T>> {
  const text = await res.text();
  seen.bodies.push(text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body: body as T, headers: res.headers, text };
}

/** Calls the Worker through its real fetch handler and records the response body. */
export async function api<T = AnyBody>(path: string, options: CallOptions = {}): Promise<ApiResult<T>> {
  return record<T>(await call(path, options));
}

const app = createApp();

/**
 * Calls the app with `overrides` on top of the test environment (e.g. smaller caps). Config is parsed per env
 * object, so pass the same `envOverride` object to every request of one scenario.
 */
export async function apiWithEnv<T = AnyBody>(envOverride: Env, path: string, options: CallOptions = {}): Promise<ApiResult<T>> {
  const ctx = createExecutionContext();
  const res = await app.fetch(buildRequest(path, options), envOverride, ctx);
  await waitOnExecutionContext(ctx);
  observeResponse(res, `${options.method ?? "GET"} ${path.split("?")[0]}`);
  return record<T>(res);
}

/** The test environment with some vars replaced. */
export const envWith = (overrides: Record<string, string>): Env => ({ ...env, ...overrides }) as Env;

/** Records (and silences) console output; call in `beforeAll`. */
export function captureConsole(): void {
  const push = (...args: unknown[]) => {
    seen.logs.push(
      args.map((a) => (typeof a === "string" ? a : a instanceof Error ? `${a.message} ${a.stack ?? ""}` : safeJson(a))).join(" "),
    );
  };
  for (const level of ["log", "error", "warn", "info", "debug"] as const) vi.spyOn(console, level).mockImplementation(push);
}

const safeJson = (value: unknown) => {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
};

/** Call in `afterAll`: the canary never reached a response or a log line. */
export function expectCanaryNeverSeen(): void {
  const leaks = [...seen.bodies, ...seen.logs].filter((text) => text.includes(CANARY));
  expect(leaks).toEqual([]);
  // The capture worked: there were responses and access-log lines to search.
  expect(seen.bodies.length).toBeGreaterThan(0);
  expect(seen.logs.length).toBeGreaterThan(0);
}

// ---- bodies ----

export const serviceBody = (overrides: Record<string, unknown> = {}) => ({
  name: "Weather API",
  baseUrl: "https://api.weather.example.com",
  authMethod: "bearer",
  authConfig: { bearerToken: CANARY },
  networks: ["base-sepolia", "tempo-testnet"],
  mode: "testnet",
  ...overrides,
});

let slugCounter = 0;
export const uniqueSlug = (prefix = "pw") => `${prefix}-${Date.now().toString(36)}-${(slugCounter++).toString(36)}`;

export const proxyPaywallBody = (overrides: Record<string, unknown> = {}) => ({
  slug: uniqueSlug(),
  name: "Forecast",
  targetType: "PROXY",
  targetUrl: "https://api.weather.example.com/v1/forecast",
  price: "10000",
  currency: "USDC",
  networks: ["base-sepolia"],
  fulfillmentMode: "PROXY",
  ...overrides,
});

export const routePaywallBody = (serviceId: string, overrides: Record<string, unknown> = {}) => ({
  slug: uniqueSlug(),
  name: "Forecast",
  targetType: "ROUTE",
  targetRoute: "/v1/forecast",
  serviceId,
  price: "10000",
  currency: "USDC",
  networks: ["base-sepolia"],
  fulfillmentMode: "PROXY",
  ...overrides,
});

export type { Paywall, Service };

// ---- actors ----

export interface Actor {
  key: string;
  tenant: Tenant;
}

/** A fresh tenant and a key with every scope. */
export async function actor(): Promise<Actor> {
  const { key, tenant } = await createApiKey();
  return { key, tenant };
}

export async function createService(who: Actor, overrides: Record<string, unknown> = {}): Promise<Service> {
  const res = await api<{ data: Service }>("/v1/services", { key: who.key, method: "POST", body: serviceBody(overrides) });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

export async function createPaywall(who: Actor, body: Record<string, unknown>): Promise<Paywall> {
  const res = await api<{ data: Paywall }>("/v1/paywalls", { key: who.key, method: "POST", body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

// ---- assertions ----

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The error envelope with this status and code. */
export function expectError(res: ApiResult, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.code }, res.text).toEqual({ status, code });
  expect(res.body).toEqual({
    error: expect.any(String),
    code,
    ...(res.body.details === undefined ? {} : { details: res.body.details }),
    meta: { requestId: expect.stringMatching(/^req_/), timestamp: expect.stringMatching(ISO_DATE) },
  });
  expect(res.body.error.length).toBeGreaterThan(0);
}

/** 400 VALIDATION_ERROR whose details name `path` (exactly) with a non-empty message matching `message` if given. */
export function expectInvalid(res: ApiResult, path: string, message?: RegExp): void {
  expectError(res, 400, "VALIDATION_ERROR");
  const details = res.body.details as { path: string; message: string }[];
  expect(Array.isArray(details), res.text).toBe(true);
  for (const d of details) expect(d).toEqual({ path: expect.any(String), message: expect.any(String) });
  const hit = details.find((d) => d.path === path);
  expect(hit, `no detail for path "${path}" in ${res.text}`).toBeDefined();
  expect(hit?.message.length).toBeGreaterThan(0);
  if (message) expect(hit?.message).toMatch(message);
}

// ---- storage ----

export async function storedService(id: string) {
  const [row] = await db().select().from(services).where(eq(services.id, id));
  return row;
}

export async function storedPaywall(id: string) {
  const [row] = await db().select().from(paywalls).where(eq(paywalls.id, id));
  return row;
}

/** The raw D1 row, every column as stored. */
export async function rawRow(table: "services" | "paywalls", id: string): Promise<Record<string, unknown> | null> {
  return env.DB.prepare(`SELECT * FROM ${table} WHERE id = ?`).bind(id).first();
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type NewServiceRow = typeof services.$inferInsert;
type NewPaywallRow = typeof paywalls.$inferInsert;

/** Inserts rows directly (one statement per row: D1 caps bound parameters per statement), in batches. */
export async function insertRows(table: "services", rows: NewServiceRow[]): Promise<void>;
export async function insertRows(table: "paywalls", rows: NewPaywallRow[]): Promise<void>;
export async function insertRows(table: "services" | "paywalls", rows: (NewServiceRow | NewPaywallRow)[]): Promise<void> {
  const d = db();
  for (let i = 0; i < rows.length; i += 100) {
    const chunk = rows.slice(i, i + 100);
    const statements = chunk.map((row) =>
      table === "services" ? d.insert(services).values(row as NewServiceRow) : d.insert(paywalls).values(row as NewPaywallRow),
    );
    await d.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]]);
  }
}

/** A minimal valid service row for direct insertion. */
export const serviceRow = (tenantId: string, id: string, overrides: Partial<NewServiceRow> = {}): NewServiceRow => ({
  id,
  tenantId,
  name: "direct",
  baseUrl: "https://api.example.com",
  authMethod: "none",
  authConfig: {},
  networks: ["base-sepolia"],
  mode: "testnet",
  categories: [],
  publicRoutes: [],
  siwxRoutes: [],
  ...overrides,
});

/** A minimal valid PROXY paywall row (no service) for direct insertion. */
export const paywallRow = (tenant: Tenant, id: string, overrides: Partial<NewPaywallRow> = {}): NewPaywallRow => ({
  id,
  tenantId: tenant.id,
  serviceId: null,
  slug: id.replace(/_/g, "-"),
  name: "direct",
  targetType: "PROXY",
  targetUrl: "https://api.example.com/x",
  price: "1",
  currency: "USDC",
  networks: ["base-sepolia"],
  merchantWallet: tenant.walletAddress,
  timeout: 60000,
  allowedMethods: ["GET"],
  allowedHeaders: [],
  fulfillmentMode: "PROXY",
  enabled: true,
  ...overrides,
});

/**
 * A D1 binding that holds writes until `release()`: every `batch`, and every statement whose SQL matches
 * `holdStatements`, waits. `reached(n)` resolves once n writes are waiting. With it a test can order two
 * requests exactly: one checks, then stalls before its write while the other runs to completion.
 */
export function gatedD1(holdStatements: RegExp = /^$/, real: D1Database = env.DB) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let waiting = 0;
  const watchers: { n: number; resolve: () => void }[] = [];
  const arrive = async () => {
    waiting++;
    for (const w of watchers.filter((w) => waiting >= w.n)) w.resolve();
    await gate;
  };
  const held = (statement: D1PreparedStatement): D1PreparedStatement => {
    const run =
      (method: "all" | "raw" | "run" | "first") =>
      async (...args: unknown[]) => {
        await arrive();
        return (statement[method] as (...a: unknown[]) => unknown)(...args);
      };
    return {
      bind: (...values: unknown[]) => held(statement.bind(...values)),
      all: run("all"),
      raw: run("raw"),
      run: run("run"),
      first: run("first"),
    } as unknown as D1PreparedStatement;
  };
  const db = {
    prepare: (query: string) => (holdStatements.test(query) ? held(real.prepare(query)) : real.prepare(query)),
    batch: async (statements: D1PreparedStatement[]) => {
      await arrive();
      return real.batch(statements);
    },
    exec: (query: string) => real.exec(query),
    dump: () => real.dump(),
    withSession: (constraint?: string) => real.withSession(constraint),
  } as unknown as D1Database;
  return {
    db,
    reached: (n: number) =>
      new Promise<void>((resolve) => {
        if (waiting >= n) resolve();
        else watchers.push({ n, resolve });
      }),
    release: () => open(),
  };
}
