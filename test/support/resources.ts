// Helpers for the services and paywalls tests: request bodies, actors, error assertions, stored rows.
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import type { Paywall } from "../../src/api/routes/paywalls/schemas.ts";
import type { Service } from "../../src/api/routes/services/schemas.ts";
import { paywalls, services, type Tenant } from "../../src/db/schema.ts";
import { canaries } from "./canaries.ts";
import { type ApiResult, api } from "./client.ts";
import { createApiKey, db } from "./factories.ts";

/** A secret value used in every secret field; the canary scan fails the file if it reaches a response or a log line. */
export const CANARY = canaries.register("canary", "resources.ts CANARY", "canary-5ecret-9d1f6a2b7c");

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
  // details, when present, is always a list of {path, message} (a reason for SSRF_BLOCKED and INSUFFICIENT_SCOPE).
  if (res.body.details !== undefined) {
    expect(Array.isArray(res.body.details), res.text).toBe(true);
    for (const d of res.body.details) {
      expect(d, res.text).toEqual({
        path: expect.any(String),
        message: expect.any(String),
        ...(d.reason ? { reason: d.reason } : {}),
      });
    }
  }
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
