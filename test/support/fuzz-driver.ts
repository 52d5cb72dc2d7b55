// Drivers of the schema-driven fuzzing (test/adversarial/fuzz.test.ts): the transport, the oracles every response
// must pass, request generation from the served document, the business fixups each operation needs, and the
// fixtures (a reader tenant with data, a stranger, writers that rotate before the beta caps).
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterAll, beforeAll, expect } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { ERROR_STATUS } from "../../src/core/http/errors.ts";
import { usdcDecimal } from "../../src/core/money/usdc.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { allowedHeaderProblem, headerNameProblem, paramNameProblem } from "../../src/lib/header-rules.ts";
import { routePathProblem } from "../../src/lib/url-rules.ts";
import { AUTH_FIELDS, AUTH_METHODS, NETWORKS, type SpecAuthMethod } from "../fixtures/spec.ts";
import { applyRecords, channelOf, channelRecord } from "../sessions/channels-support.ts";
import { api, read, send as sendRequest } from "./client.ts";
import { printToRunner } from "./console.ts";
import { createApiKey, db } from "./factories.ts";
import { envInt } from "./fuzz-env.ts";
import {
  type ArbitraryOptions,
  arbitraryFromSchema,
  type OpenApiDoc,
  type Operation,
  operationsOf,
  publicUrlArbitrary,
  requestSchema,
  responseSchema,
  type Schema,
  validateSchema,
} from "./openapi-arbitraries.ts";
import type { BodyMutation } from "./openapi-mutations.ts";
import { seededRandom } from "./random.ts";

export const RUNS = envInt("FUZZ_RUNS", 30);
/** Per test: generous, since a failing property shrinks by re-sending requests. */
export const TIMEOUT = 120_000 + RUNS * 3_000;
export const MAX_BODY_BYTES = 100 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// Contract facts the fixups need (docs/api.md, "Services" and "Paywalls")

export type Mode = keyof typeof NETWORKS;
export const modeOf = (network: string): Mode =>
  (NETWORKS.testnet as readonly string[]).includes(network) ? "testnet" : "mainnet";

export const ALL_HTTP_METHODS = ["GET", "POST", "PUT", "PATCH"];

// ---------------------------------------------------------------------------------------------------------------
// Transport

export interface Req {
  method: string;
  /** Path and query string. */
  path: string;
  /** Body text; sent with `Content-Type: application/json` unless `contentType` says otherwise (`null`: no header). */
  text?: string;
  contentType?: string | null;
  /** Send the body as a ReadableStream (no Content-Length). */
  stream?: boolean;
}

export interface Answer {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked against the document, then read freely
  body: any;
  headers: Headers;
}

export let requestCount = 0;
export const kindCounts = new Map<string, number>();
export const countKind = (kind: string) => kindCounts.set(kind, (kindCounts.get(kind) ?? 0) + 1);

export class Actor {
  requests = 0;
  services = 0;
  paywalls = 0;
  /** A service per mode, for ROUTE paywalls and paywalls with a service. */
  anchor: Record<Mode, string> = { testnet: "", mainnet: "" };

  key: string;
  keyId: string;
  tenant: Tenant;

  constructor(key: string, keyId: string, tenant: Tenant) {
    this.key = key;
    this.keyId = keyId;
    this.tenant = tenant;
  }

  static async create(): Promise<Actor> {
    const { key, row, tenant } = await createApiKey({ name: "fuzz" });
    return new Actor(key, row.id, tenant);
  }

  /** A fresh key of the same tenant well before the per-key rate limit (1000 per window). */
  async ensureQuota(): Promise<void> {
    if (this.requests < 900) return;
    const { key, row } = await createApiKey({ tenant: this.tenant, name: "fuzz" });
    this.key = key;
    this.keyId = row.id;
    this.requests = 0;
  }
}

export async function send(actor: Actor | null, req: Req): Promise<Answer> {
  requestCount++;
  const headers = new Headers();
  if (actor) {
    await actor.ensureQuota();
    actor.requests++;
    headers.set("authorization", `Bearer ${actor.key}`);
  }
  let body: BodyInit | undefined;
  if (req.text !== undefined) {
    const contentType = req.contentType === undefined ? "application/json" : req.contentType;
    if (contentType !== null) headers.set("content-type", contentType);
    const bytes = new TextEncoder().encode(req.text);
    body = req.stream
      ? new ReadableStream({
          start(controller) {
            for (let i = 0; i < bytes.length; i += 16 * 1024) controller.enqueue(bytes.slice(i, i + 16 * 1024));
            controller.close();
          },
        })
      : req.text;
  }
  return read(await sendRequest(new Request(`https://api.test${req.path}`, { method: req.method, headers, body })));
}

/** The tenant's services and paywalls rows, every column as stored. */
export async function snapshot(tenantId: string): Promise<string> {
  const [services, paywalls, hooks] = await env.DB.batch([
    env.DB.prepare("SELECT * FROM services WHERE tenant_id = ? ORDER BY id").bind(tenantId),
    env.DB.prepare("SELECT * FROM paywalls WHERE tenant_id = ? ORDER BY id").bind(tenantId),
    env.DB.prepare("SELECT * FROM webhook_endpoints WHERE tenant_id = ? ORDER BY id").bind(tenantId),
  ]);
  return JSON.stringify([services?.results, paywalls?.results, hooks?.results]);
}

// ---------------------------------------------------------------------------------------------------------------
// The document and the oracles

export let doc: OpenApiDoc;

export interface OpEntry {
  id: string;
  method: string;
  path: string;
  op: Operation;
}

export const ops = new Map<string, OpEntry>();
export const entry = (id: string): OpEntry => {
  const found = ops.get(id);
  if (!found) throw new Error(`${id} is not in /openapi.json`);
  return found;
};

export const successStatus = (op: Operation) => Number(Object.keys(op.responses).find((s) => s.startsWith("2")));

export const describeExchange = (req: Req, ans: Answer) =>
  `${req.method} ${req.path.slice(0, 300)}${req.text !== undefined ? ` body=${req.text.slice(0, 300)}${req.text.length > 300 ? `… (${req.text.length} chars)` : ""}` : ""} → ${ans.status} ${ans.text.slice(0, 600)}`;

/** The oracles every response must pass: documented status and body, never a 5xx, the error envelope with a request id. */
export function expectDocumented(e: OpEntry, req: Req, ans: Answer): void {
  const where = describeExchange(req, ans);
  expect(ans.status, `5xx: ${where}`).toBeLessThan(500);
  expect(Object.keys(e.op.responses), `status not documented for ${e.id}: ${where}`).toContain(String(ans.status));
  expect(ans.headers.get("content-type") ?? "", where).toMatch(/^application\/json/);
  expect(ans.body, `body is not JSON: ${where}`).toBeDefined();
  const schema = responseSchema(e.op, ans.status) as Schema;
  expect(validateSchema(doc, schema, ans.body, { noUndocumentedProperties: true }), `response schema: ${where}`).toEqual([]);
  expect(ans.body.meta?.requestId, where).toMatch(/^req_[0-9a-f]+$/);
  expect(ans.headers.get("x-request-id"), where).toBe(ans.body.meta.requestId);
  if (ans.status >= 400) {
    expect(
      Object.keys(ans.body).filter((k) => !["error", "code", "details", "meta"].includes(k)),
      where,
    ).toEqual([]);
    expect(ans.body.error.length, where).toBeGreaterThan(0);
    const canonical = ERROR_STATUS[ans.body.code as keyof typeof ERROR_STATUS];
    expect(
      canonical === ans.status || (ans.body.code === "VALIDATION_ERROR" && [413, 415].includes(ans.status)),
      `code/status: ${where}`,
    ).toBe(true);
  }
}

export function expectRefused(req: Req, ans: Answer, status: number, code = "VALIDATION_ERROR"): void {
  expect({ status: ans.status, code: ans.body?.code }, describeExchange(req, ans)).toEqual({ status, code });
}

/** True when a value holds a string with a lone surrogate (which the test runner cannot send over its UTF-8 channel). */
export function hasLoneSurrogate(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return !value.isWellFormed();
  if (depth > 50 || value === null || typeof value !== "object") return false;
  return Object.entries(value).some(([k, v]) => !k.isWellFormed() || hasLoneSurrogate(v, depth + 1));
}

/**
 * Runs checks whose values may hold lone surrogates (bodies as sent). A failure with one is rethrown with JSON-escaped
 * values: the raw strings would break the test runner's channel (an "Invalid WebSocket frame: invalid UTF-8" crash).
 */
export async function wellFormedFailures(work: () => Promise<void> | void): Promise<void> {
  try {
    await work();
  } catch (err) {
    const e = err as Error & { actual?: unknown; expected?: unknown };
    if (e.message.isWellFormed() && !hasLoneSurrogate(e.actual) && !hasLoneSurrogate(e.expected)) throw err;
    throw new Error(
      `${e.message.toWellFormed()}\n  actual:   ${JSON.stringify(e.actual)}\n  expected: ${JSON.stringify(e.expected)}`,
    );
  }
}

export const tryParse = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Generated requests

export interface Aux {
  flags: boolean[];
  picks: number[];
  url: string;
  secrets: string[];
}

export interface Generated {
  // biome-ignore lint/suspicious/noExplicitAny: generated from the document; the fixups shape it
  body: any;
  query: Record<string, unknown>;
  path: Record<string, unknown>;
  aux: Aux;
}

export const GEN_OPTIONS: ArbitraryOptions = { formats: { uri: publicUrlArbitrary() } };

export const auxArbitrary: fc.Arbitrary<Aux> = fc.record({
  flags: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  picks: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
  url: publicUrlArbitrary(),
  secrets: fc.array(
    fc
      .string({
        unit: fc.oneof(fc.constant("s"), fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }), fc.constant("🔑")),
        minLength: 1,
        maxLength: 40,
      })
      .filter((s) => s !== "***"),
    { minLength: 2, maxLength: 2 },
  ),
});

/** Body, query and path values generated from the operation's schemas. */
export function requestArbitrary(e: OpEntry, options: ArbitraryOptions = GEN_OPTIONS): fc.Arbitrary<Generated> {
  const bodySchema = requestSchema(e.op);
  const params = e.op.parameters ?? [];
  const byLocation = (where: string) => params.filter((p) => p.in === where);
  const recordOf = (list: typeof params) =>
    fc.record(Object.fromEntries(list.map((p) => [p.name, arbitraryFromSchema(doc, p.schema, options)])), {
      requiredKeys: list.filter((p) => p.required).map((p) => p.name),
      noNullPrototype: true,
    }) as fc.Arbitrary<Record<string, unknown>>;
  return fc.record({
    body: bodySchema
      ? arbitraryFromSchema(doc, bodySchema, options).map((v) => JSON.parse(JSON.stringify(v)))
      : fc.constant(undefined),
    query: recordOf(byLocation("query")),
    path: recordOf(byLocation("path")),
    aux: auxArbitrary,
  });
}

/** A query string from generated values: `null` (a nullable parameter) is left out, like an absent one. */
export const queryString = (query: Record<string, unknown>) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : "";
};

export const pick = <T>(list: readonly T[], n: number | undefined): T => list[(n ?? 0) % list.length] as T;
export const unique = <T>(list: T[]) => [...new Set(list)];

export let slugCounter = 0;
/** Slugs are unique per service; a counter suffix keeps every generated slug unique (schema: ^[a-z0-9._-]+$, 1-50). */
export const uniqueSlug = (generated: string) => `${generated.slice(0, 40)}-${(slugCounter++).toString(36)}`;

/** Networks of one mode (the service's, or the first network's): the schema cannot say "must match mode" or "no repeats". */
export function networksOf(mode: Mode, list: string[] | undefined, n: number | undefined): string[] {
  const kept = unique(list ?? []).filter((network) => modeOf(network) === mode);
  return kept.length > 0 ? kept : [pick(NETWORKS[mode], n)];
}

/** The authConfig of a method: exactly its fields (docs/api.md), values from generated strings; `***` only to keep a stored secret. */
export function authConfigFor(method: string, values: string[], keepStored = false): Record<string, string> {
  const spec = AUTH_FIELDS[method as SpecAuthMethod] as { names: readonly string[]; secrets: readonly string[] };
  const fields = [...spec.names, ...spec.secrets];
  return Object.fromEntries(
    fields.map((f, i) => [f, keepStored && spec.secrets.includes(f) ? "***" : (values[i % values.length] ?? "value")]),
  );
}

export const maskedAuthConfig = (method: string, config: Record<string, string>) => {
  const spec = AUTH_FIELDS[method as SpecAuthMethod] as { names: readonly string[]; secrets: readonly string[] };
  return Object.fromEntries(Object.keys(config).map((f) => [f, spec.names.includes(f) ? config[f] : "***"]));
};

export function dedupeHeaders(headers: { key: string; value: string }[] | null | undefined, stored: string[] = []) {
  if (!headers) return headers;
  const seen = new Set<string>();
  return headers
    .filter((h) => !seen.has(h.key.toLowerCase()) && seen.add(h.key.toLowerCase()))
    .map((h) => ({ key: h.key, value: h.value === "***" && !stored.includes(h.key) ? "x" : h.value }));
}

// ---------------------------------------------------------------------------------------------------------------
// Expectations of successful writes

export const facilitatorFor = (networks: string[]) => {
  const modes = new Set(networks.map(modeOf));
  return modes.size === 1 && modes.has("mainnet") ? env.FACILITATOR_URL_MAINNET : env.FACILITATOR_URL_TESTNET;
};

export const paymentUrlsFor = (serviceId: string | null, slug: string, networks: string[]) => {
  if (!serviceId) return { x402: null, mpp: null };
  const tail = `${encodeURIComponent(serviceId)}/${encodeURIComponent(slug)}`;
  const base = env.PAYMENT_BASE_URL.replace(/\/+$/, "");
  return {
    x402: `${base}/api/x402/pay/${tail}`,
    mpp: networks.includes("tempo") || networks.includes("tempo-testnet") ? `${base}/api/mpp/pay/${tail}` : null,
  };
};

/** A normalized route: one leading slash, no empty segment, no trailing slash (except the root), no query or fragment. */
export const NORMALIZED_ROUTE = /^\/(?:[^/?#]+(?:\/[^/?#]+)*)?$/;

// biome-ignore lint/suspicious/noExplicitAny: JSON
export type Json = any;

export function expectServiceCreated(data: Json, sent: Json, tenant: Tenant) {
  expect(data).toEqual({
    id: expect.stringMatching(/^svc_/),
    name: sent.name,
    description: sent.description ?? null,
    baseUrl: sent.baseUrl,
    authMethod: sent.authMethod,
    authConfig: maskedAuthConfig(sent.authMethod, sent.authConfig ?? {}),
    networks: sent.networks,
    mode: sent.mode,
    contactEmail: sent.contactEmail ?? null,
    categories: sent.categories ?? [],
    docsHomepage: sent.docsHomepage ?? null,
    docsApiReference: sent.docsApiReference ?? null,
    docsLlms: sent.docsLlms ?? null,
    xGuidance: sent.xGuidance ?? null,
    publicRoutes: sent.publicRoutes ?? [],
    siwxRoutes: sent.siwxRoutes ?? [],
    userId: tenant.id,
    createdAt: data.updatedAt,
    updatedAt: expect.any(String),
    Paywall: [],
    discovery: discoveryUrlsFor(data.id, sent.docsLlms ?? null),
  });
}

/** A service's discovery URLs on the payment origin (docs/discovery.md): its llms.txt is `docsLlms` when set. */
export const discoveryUrlsFor = (serviceId: string, docsLlms: string | null) => {
  const origin = new URL(env.PAYMENT_BASE_URL).origin;
  const base = `${origin}/api/discovery/${encodeURIComponent(serviceId)}`;
  return {
    openapiUrl: `${base}/openapi.json`,
    llmsTxtUrl: docsLlms ?? `${base}/llms.txt`,
    mcpUrl: `${origin}/api/mcp/${encodeURIComponent(serviceId)}`,
  };
};

export function expectServicePatched(data: Json, before: Json, patch: Json) {
  const fields = Object.keys(patch).filter((k) => k !== "authConfig");
  const method = patch.authMethod ?? before.authMethod;
  expect(data).toEqual({
    ...before,
    ...Object.fromEntries(fields.map((k) => [k, patch[k]])),
    authConfig: patch.authConfig ? maskedAuthConfig(method, patch.authConfig) : before.authConfig,
    updatedAt: expect.any(String),
    discovery: discoveryUrlsFor(before.id, Object.hasOwn(patch, "docsLlms") ? patch.docsLlms : before.docsLlms),
  });
  expect(Date.parse(data.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
}

export function expectPaywallCreated(data: Json, sent: Json, tenant: Tenant) {
  const targetType = sent.targetType;
  expect(data).toEqual({
    id: expect.stringMatching(/^pw_/),
    slug: sent.slug,
    name: sent.name,
    description: sent.description ?? null,
    targetType,
    targetUrl: targetType === "PROXY" ? sent.targetUrl : null,
    targetRoute: targetType === "ROUTE" ? sent.targetRoute : null,
    routePattern: targetType === "ROUTE" ? expect.stringMatching(NORMALIZED_ROUTE) : null,
    price: sent.price,
    priceUsdc: usdcDecimal(sent.price),
    currency: sent.currency,
    network: sent.networks[0],
    networks: sent.networks,
    merchantWallet: tenant.walletAddress,
    facilitatorUrl: facilitatorFor(sent.networks),
    timeout: sent.timeout ?? 60_000,
    validityWindow: 300,
    allowedMethods: sent.allowedMethods ?? ALL_HTTP_METHODS,
    allowedHeaders: [],
    fulfillmentMode: sent.fulfillmentMode,
    enabled: sent.enabled ?? true,
    sessions: sent.sessions ?? { enabled: false },
    headers: sent.headers ? sent.headers.map((h: Json) => ({ key: h.key, value: "***" })) : null,
    queryParams: sent.queryParams ?? null,
    cacheRules: sent.cacheRules ?? null,
    inputSchema: sent.inputSchema ?? null,
    outputSchema: sent.outputSchema ?? null,
    outputExample: sent.outputExample ?? null,
    serviceId: sent.serviceId ?? null,
    userId: tenant.id,
    paymentUrls: paymentUrlsFor(sent.serviceId ?? null, sent.slug, sent.networks),
    createdAt: data.updatedAt,
    updatedAt: expect.any(String),
  });
}

export function expectPaywallPatched(data: Json, before: Json, patch: Json, tenant: Tenant) {
  const has = (k: string) => Object.hasOwn(patch, k);
  const value = (k: string) => (has(k) ? patch[k] : before[k]);
  const targetType = value("targetType");
  const networks = value("networks");
  const serviceId = value("serviceId");
  const wallets = [tenant.walletAddress, tenant.tempoWalletAddress].filter(Boolean) as string[];
  expect(data).toEqual({
    ...before,
    ...Object.fromEntries(
      [
        "name",
        "description",
        "price",
        "currency",
        "timeout",
        "allowedMethods",
        "allowedHeaders",
        "queryParams",
        "enabled",
        "sessions",
        "inputSchema",
        "outputSchema",
        "outputExample",
        "cacheRules",
      ].map((k) => [k, value(k)]),
    ),
    priceUsdc: usdcDecimal(value("price")),
    targetType,
    targetUrl: targetType === "PROXY" ? value("targetUrl") : null,
    targetRoute: targetType === "ROUTE" ? value("targetRoute") : null,
    routePattern: targetType === "ROUTE" ? expect.stringMatching(NORMALIZED_ROUTE) : null,
    networks,
    network: networks[0],
    facilitatorUrl: facilitatorFor(networks),
    merchantWallet: has("merchantWallet")
      ? wallets.find((w) => w.toLowerCase() === patch.merchantWallet.toLowerCase())
      : before.merchantWallet,
    headers: has("headers")
      ? patch.headers === null
        ? null
        : patch.headers.map((h: Json) => ({ key: h.key, value: "***" }))
      : before.headers,
    serviceId,
    paymentUrls: paymentUrlsFor(serviceId, before.slug, networks),
    updatedAt: expect.any(String),
  });
}

/** A GET of the resource answers exactly what the write answered. */
export async function expectReadBack(actor: Actor, path: string, data: Json) {
  const ans = await send(actor, { method: "GET", path });
  expectDocumented(entry(`GET ${path.replace(/\/[^/]+$/, "/{id}")}`), { method: "GET", path }, ans);
  expect(ans.status).toBe(200);
  expect(JSON.stringify(ans.body.data)).toBe(JSON.stringify(data));
}

// ---------------------------------------------------------------------------------------------------------------
// Fixtures: a reader tenant with data to read, writer tenants that rotate before the beta caps, a stranger

export let reader: Actor;
export let stranger: Actor;
export let strangerIds: SeededIds;
type SeededIds = {
  services: string[];
  paywalls: string[];
  transactions: string[];
  events: string[];
  "webhook-endpoints": string[];
  channels: string[];
};
export let readerIds: SeededIds;
export let writer: Actor;

export const serviceBody = (mode: Mode, authMethod = "none", values = ["secret"]) =>
  fixFieldRules({
    name: `svc ${mode}`,
    baseUrl: "https://api.example.com",
    authMethod,
    authConfig: authConfigFor(authMethod, values),
    networks: [...NETWORKS[mode]],
    mode,
  });

export async function createOk(actor: Actor, path: string, body: unknown): Promise<Json> {
  const ans = await send(actor, { method: "POST", path, text: JSON.stringify(body) });
  expect(ans.status, describeExchange({ method: "POST", path, text: JSON.stringify(body) }, ans)).toBe(201);
  if (path === "/v1/services") actor.services++;
  else actor.paywalls++;
  return ans.body.data;
}

export async function withAnchors(actor: Actor): Promise<Actor> {
  actor.anchor.testnet = (await createOk(actor, "/v1/services", serviceBody("testnet"))).id;
  actor.anchor.mainnet = (await createOk(actor, "/v1/services", serviceBody("mainnet"))).id;
  return actor;
}

/** The writer, replaced by a fresh tenant well before the caps (50 services, 500 paywalls per tenant). */
export async function currentWriter(): Promise<Actor> {
  // Small tenants also keep the before/after snapshots of refused writes cheap.
  if (writer.services >= 15 || writer.paywalls >= 30) writer = await withAnchors(await Actor.create());
  return writer;
}

export async function idsOf(tenantId: string) {
  const list = async (table: string) =>
    (
      await env.DB.prepare(`SELECT id FROM ${table} WHERE tenant_id = ? ORDER BY id`).bind(tenantId).all<{ id: string }>()
    ).results.map((r) => r.id);
  return {
    services: await list("services"),
    paywalls: await list("paywalls"),
    transactions: await list("transactions"),
    events: await list("events"),
  };
}

export async function seedReadable(actor: Actor) {
  await writeDemoData(db(), actor.tenant, 30, seededRandom(30));
  await withAnchors(actor);
  await createOk(actor, "/v1/paywalls", {
    slug: "proxy",
    name: "P",
    targetType: "PROXY",
    targetUrl: "https://api.example.com/x",
    price: "5",
    currency: "USDC",
    networks: ["base"],
    fulfillmentMode: "PROXY",
    enabled: false,
  });
  await createOk(actor, "/v1/paywalls", {
    slug: "route",
    name: "R",
    targetType: "ROUTE",
    targetRoute: "/r",
    serviceId: actor.anchor.mainnet,
    price: "5",
    currency: "USDC",
    networks: ["tempo"],
    fulfillmentMode: "SIGNED_URL",
    headers: [{ key: "X-K", value: "v" }],
  });
  const hook = await send(actor, json("POST", "/v1/webhook-endpoints", { url: HOOK_URL, events: ["transaction.completed"] }));
  expect(hook.status).toBe(201);
  const ids = await idsOf(actor.tenant.id);
  // Session channels on the first paywalls, as the records consumer writes them: open, closed, on either network.
  const channels = ids.paywalls.slice(0, 4).map((id, i) =>
    channelOf(
      { id, tenantId: actor.tenant.id, serviceId: null },
      {
        status: i % 2 ? "CLOSED" : "OPEN",
        network: i < 2 ? "base-sepolia" : "tempo-testnet",
        openedAt: new Date(Date.now() - i * 60_000),
      },
    ),
  );
  await applyRecords(channels.map(channelRecord));
  return { ...ids, "webhook-endpoints": [hook.body.data.id as string], channels: channels.map((c) => c.id) };
}

/** Reads the document and seeds the reader, the stranger and the first writer (call in `beforeAll`). */
export async function setUpFuzzing(): Promise<void> {
  requestCount = 0;
  kindCounts.clear();
  doc = (await api<OpenApiDoc>("/openapi.json")).body;
  for (const o of operationsOf(doc)) ops.set(o.id, o);
  reader = await Actor.create();
  readerIds = await seedReadable(reader);
  stranger = await Actor.create();
  strangerIds = await seedReadable(stranger);
  writer = await withAnchors(await Actor.create());
}

/** One line: how many requests of which kinds this run sent. */
export const fuzzSummary = () =>
  `fuzz: ${requestCount} requests (${RUNS} runs per property; ${[...kindCounts].map(([k, n]) => `${k} ${n}`).join(", ")})`;

// ---------------------------------------------------------------------------------------------------------------
// Drivers: one per operation. `build` turns generated values into a business-valid request.

export interface Prepared {
  actor: Actor | null;
  req: Req;
  /** The body as it will be parsed by the server (absent without a body). */
  body?: Json;
  /** Further checks of a 2xx, from the body actually sent. */
  verify?: (ans: Answer, sent: Json) => Promise<void>;
}

export interface Driver {
  build: (g: Generated) => Promise<Prepared>;
}

export const json = (method: string, path: string, body: Json): Prepared["req"] => ({ method, path, text: JSON.stringify(body) });

/**
 * Fixups for the field rules the schema cannot express (docs/api.md, "Field rules"): URLs sent in their
 * normalized form (the API stores the href), routes that keep the origin, header and field names, and text
 * without control characters (TAB/LF/CR kept in multi-line fields), bidi controls or line separators.
 */
export function fixFieldRules(body: Json): Json {
  const b = { ...body };
  const singleLine = (v: string) => v.replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, "") || "x";
  // A header value or a secret: no control character but TAB, no line separator.
  const oneLineValue = (v: string) => v.replace(/(?!\t)[\p{Cc}\u2028\u2029]/gu, "");
  const multiLine = (v: string) => v.replace(/(?![\t\n\r])\p{Cc}/gu, "");
  const route = (v: string, i: number) => (routePathProblem(v) === null ? v : `/r${i}`);
  for (const field of ["baseUrl", "targetUrl", "docsHomepage", "docsApiReference", "docsLlms"]) {
    if (typeof b[field] === "string" && URL.canParse(b[field])) b[field] = new URL(b[field]).href;
  }
  if (typeof b.name === "string") b.name = singleLine(b.name);
  for (const field of ["description", "xGuidance"]) if (typeof b[field] === "string") b[field] = multiLine(b[field]);
  if (Array.isArray(b.categories)) b.categories = b.categories.map(singleLine);
  for (const field of ["publicRoutes", "siwxRoutes"]) if (Array.isArray(b[field])) b[field] = b[field].map(route);
  if (typeof b.targetRoute === "string") b.targetRoute = route(b.targetRoute, 0);
  if (Array.isArray(b.allowedHeaders))
    b.allowedHeaders = b.allowedHeaders.map((h: string, i: number) => (allowedHeaderProblem(h) ? `X-H${i}` : h));
  if (Array.isArray(b.headers)) {
    b.headers = b.headers.map((h: Json, i: number) => ({
      key: headerNameProblem(h.key) || h.key.includes("|") ? `X-K${i}` : h.key,
      value: oneLineValue(h.value),
    }));
  }
  // Discovery schemas (docs/discovery.md): a JSON Schema of the documented subset, and an example that satisfies it.
  if (b.inputSchema != null) b.inputSchema = { type: "object", properties: { q: { type: "string" } } };
  if (b.outputSchema != null) b.outputSchema = { type: "object" };
  if (b.outputExample != null) b.outputExample = { ok: true };
  if (Array.isArray(b.queryParams)) {
    b.queryParams = b.queryParams.map((q: Json, i: number) => ({
      key: paramNameProblem(q.key) ? `k${i}` : q.key,
      value: singleLine(q.value),
    }));
  }
  if (b.authConfig && typeof b.authConfig === "object") {
    const config = { ...b.authConfig };
    if (config.headerName !== undefined && headerNameProblem(config.headerName)) config.headerName = "X-Upstream-Key";
    for (const name of ["paramName", "fieldName"])
      if (config[name] !== undefined && paramNameProblem(config[name])) config[name] = "key";
    for (const secret of ["bearerToken", "token", "apiKey", "apiSecret", "headerValue", "paramValue", "fieldValue"]) {
      if (typeof config[secret] === "string" && config[secret] !== "***") config[secret] = oneLineValue(config[secret]) || "s";
    }
    b.authConfig = config;
  }
  return b;
}

/** Fixups of a generated ServiceCreate body (rules the schema cannot express). */
export function fixServiceCreate(body: Json, aux: Aux): Json {
  const b = { ...body };
  b.networks = networksOf(b.mode, b.networks, aux.picks[0]); // networks must match mode, no repeats
  const values = [...Object.values((b.authConfig ?? {}) as Record<string, string>), ...aux.secrets].filter(
    (v) => v !== "***" && v.isWellFormed(),
  );
  const config = authConfigFor(b.authMethod, values); // exactly the fields of authMethod
  if (Object.keys(config).length === 0 && aux.flags[0]) delete b.authConfig;
  else b.authConfig = config;
  return fixFieldRules(b);
}

/** Fixups of a generated ServiceUpdate body against the stored service `before` (the result is validated as a whole). */
export function fixServiceUpdate(body: Json, before: Json, aux: Aux): Json {
  const b = { ...body };
  const mode: Mode = b.mode ?? before.mode;
  if (b.networks !== undefined) b.networks = networksOf(mode, b.networks, aux.picks[0]);
  else if (mode !== before.mode) b.networks = networksOf(mode, undefined, aux.picks[0]); // a mode change needs networks of the mode
  if (b.authMethod !== undefined || b.authConfig !== undefined) {
    const method = b.authMethod ?? before.authMethod;
    const values = [...Object.values((b.authConfig ?? {}) as Record<string, string>), ...aux.secrets].filter(
      (v) => v !== "***" && v.isWellFormed(),
    );
    b.authConfig = authConfigFor(method, values, method === before.authMethod && aux.flags[1]); // `***` keeps a stored secret
  }
  return fixFieldRules(b);
}

/**
 * `price` is `type: string` in the document, but the contract (docs/api.md) allows only an integer of micro-USDC written canonically:
 * digits, no leading zero, 1 to 10^15. A generated string that is not one becomes a price from the generated numbers.
 */
export const fixPrice = (price: string, aux: Aux) =>
  /^[1-9][0-9]{0,15}$/.test(price) && BigInt(price) <= 10n ** 15n ? price : String(1 + ((aux.picks[5] ?? 0) % 10 ** 15));

/**
 * `sessions` holds on the paywall as it will be (docs/sessions.md): a minimum deposit from the price to 10^12, and an
 * EVM network to turn them on. Sent when generated, or when the stored setting (`stored`) would not hold.
 */
function fixSessions(b: Json, price: string, networks: string[], stored?: Json) {
  const sessions = b.sessions ?? stored;
  if (!sessions) return;
  const fixed = { ...sessions };
  const deposit = fixed.minDeposit;
  const fits = (d: string) => /^[1-9][0-9]{0,12}$/.test(d) && BigInt(d) <= 10n ** 12n && BigInt(d) >= BigInt(price);
  if (deposit !== undefined && !fits(deposit)) {
    if (fits(price)) fixed.minDeposit = price;
    else delete fixed.minDeposit;
  }
  if (fixed.enabled && !networks.some((n) => n !== "tempo" && n !== "tempo-testnet")) fixed.enabled = false;
  if (b.sessions !== undefined || JSON.stringify(fixed) !== JSON.stringify(stored)) b.sessions = fixed;
}

/** Fixups of a generated PaywallCreate body for `actor` (its anchor services carry the modes). */
export function fixPaywallCreate(body: Json, actor: Actor, aux: Aux): Json {
  const b = { ...body };
  b.slug = uniqueSlug(b.slug);
  const mode = modeOf(b.networks[0]);
  const withService = b.targetType === "ROUTE" || (b.serviceId !== undefined && b.serviceId !== null); // ROUTE needs a service
  if (withService) b.serviceId = actor.anchor[mode]; // serviceId must name one of the caller's services
  b.networks = networksOf(mode, b.networks, aux.picks[1]); // the service's mode, or one mode without a service
  if (b.targetType === "PROXY") {
    if (!b.targetUrl) b.targetUrl = aux.url; // PROXY needs targetUrl
    delete b.targetRoute; // targetRoute applies to ROUTE only
  } else {
    if (b.targetRoute === undefined) b.targetRoute = "/route";
    if (b.targetUrl !== undefined) {
      if (aux.flags[2]) delete b.targetUrl;
      else b.targetUrl = null; // targetUrl applies to PROXY only
    }
  }
  if (b.network !== undefined && !b.networks.includes(b.network)) b.network = pick(b.networks as string[], aux.picks[2]); // network ∈ networks
  b.price = fixPrice(b.price, aux);
  fixSessions(b, b.price, b.networks);
  if (b.headers) b.headers = dedupeHeaders(b.headers); // keys unique (case-insensitive); `***` only keeps a stored value
  if (b.allowedMethods) b.allowedMethods = unique(b.allowedMethods); // no repeats
  return fixFieldRules(b);
}

/** Fixups of a generated PaywallUpdate body against the stored paywall `before`. */
export function fixPaywallUpdate(body: Json, before: Json, actor: Actor, aux: Aux): Json {
  const b = { ...body };
  const targetType = b.targetType ?? before.targetType;
  let serviceId: string | null = Object.hasOwn(b, "serviceId") ? b.serviceId : before.serviceId;
  const networksIn: string[] = b.networks ?? before.networks;
  const mode = modeOf(networksIn[0] as string);
  if (serviceId !== null || targetType === "ROUTE") {
    serviceId = actor.anchor[mode]; // one of the caller's services; ROUTE needs one
    if (serviceId !== before.serviceId || Object.hasOwn(b, "serviceId")) b.serviceId = serviceId;
  }
  const networks = networksOf(mode, networksIn, aux.picks[1]);
  if (b.networks !== undefined || JSON.stringify(networks) !== JSON.stringify(before.networks)) b.networks = networks;
  if (targetType === "PROXY") {
    const url = Object.hasOwn(b, "targetUrl") ? b.targetUrl : before.targetUrl;
    if (!url) b.targetUrl = aux.url;
    if (b.targetRoute !== undefined && b.targetRoute !== null) b.targetRoute = null;
  } else {
    const route = Object.hasOwn(b, "targetRoute") ? b.targetRoute : before.targetRoute;
    if (!route) b.targetRoute = "/route";
    if (b.targetUrl !== undefined && b.targetUrl !== null) b.targetUrl = null;
  }
  if (b.merchantWallet !== undefined) {
    // only the tenant's own wallets, compared case-insensitively
    const wallet = pick(
      [actor.tenant.walletAddress, actor.tenant.tempoWalletAddress ?? actor.tenant.walletAddress],
      aux.picks[3],
    );
    b.merchantWallet = aux.flags[3] ? `0x${wallet.slice(2).toUpperCase()}` : wallet;
  }
  if (b.price !== undefined) b.price = fixPrice(b.price, aux);
  fixSessions(b, b.price ?? before.price, b.networks ?? before.networks, before.sessions);
  if (b.headers)
    b.headers = dedupeHeaders(
      b.headers,
      (before.headers ?? []).map((h: Json) => h.key),
    );
  if (b.allowedMethods) b.allowedMethods = unique(b.allowedMethods);
  return fixFieldRules(b);
}

export async function freshService(actor: Actor, aux: Aux, withPaywall = false): Promise<Json> {
  const method = pick(AUTH_METHODS, aux.picks[4]);
  const mode: Mode = aux.flags[4] ? "mainnet" : "testnet";
  const service = await createOk(actor, "/v1/services", serviceBody(mode, method, aux.secrets));
  if (withPaywall) {
    const paywall = await createOk(actor, "/v1/paywalls", {
      slug: uniqueSlug("child"),
      name: "child",
      targetType: "ROUTE",
      targetRoute: "/c",
      serviceId: service.id,
      price: "1",
      currency: "USDC",
      networks: [NETWORKS[mode][0]],
      fulfillmentMode: "PROXY",
    });
    return { ...service, Paywall: [paywall] };
  }
  return service;
}

export async function freshPaywall(actor: Actor, aux: Aux): Promise<Json> {
  const route = aux.flags[5];
  const mode: Mode = aux.flags[6] ? "mainnet" : "testnet";
  return createOk(actor, "/v1/paywalls", {
    slug: uniqueSlug("fresh"),
    name: "fresh",
    targetType: route ? "ROUTE" : "PROXY",
    ...(route ? { targetRoute: "/fresh", serviceId: actor.anchor[mode] } : { targetUrl: "https://api.example.com/fresh" }),
    price: "100",
    currency: "USDC",
    networks: [...NETWORKS[mode]],
    fulfillmentMode: "PROXY",
    headers: [{ key: "X-Stored", value: "stored" }],
  });
}

/** The page a list must return, computed from D1: count and ids, newest first, ties by id. */
export async function expectPage(
  ans: Answer,
  table: string,
  tenantId: string,
  where: [string, unknown][],
  limit: number,
  offset: number,
  newestBy = "created_at",
) {
  const conditions = ["tenant_id = ?", ...where.map(([sql]) => sql)].join(" AND ");
  const binds = [tenantId, ...where.map(([, v]) => v)];
  const total =
    (
      await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${conditions}`)
        .bind(...binds)
        .first<{ n: number }>()
    )?.n ?? 0;
  const ids = (
    await env.DB.prepare(`SELECT id FROM ${table} WHERE ${conditions} ORDER BY ${newestBy} DESC, id DESC LIMIT ? OFFSET ?`)
      .bind(...binds, limit, offset)
      .all<{ id: string }>()
  ).results.map((r) => r.id);
  expect(ans.body.meta.pagination).toEqual({ total, limit, offset, hasMore: offset + limit < total });
  expect(ans.body.data.map((d: Json) => d.id)).toEqual(ids);
}

export const listParams = (g: Generated) => {
  const query = { ...g.query };
  if (query.offset === null || query.offset === undefined) delete query.offset;
  else if (g.aux.flags[7]) query.offset = (query.offset as number) % 8; // most pages within the data
  return query;
};

export const DRIVERS: Record<string, Driver> = {
  "GET /v1/health": {
    build: async () => ({
      actor: null,
      req: { method: "GET", path: "/v1/health" },
      verify: async (ans) => expect(ans.body.data.status).toBe("ok"),
    }),
  },
  "GET /v1/me": {
    build: async () => ({
      actor: reader,
      req: { method: "GET", path: "/v1/me" },
      verify: async (ans) => {
        expect(ans.body.data.user.id).toBe(reader.tenant.id);
        expect(ans.body.data.apiKey.id).toBe(reader.keyId);
      },
    }),
  },
  "POST /v1/services": {
    build: async (g) => {
      const actor = await currentWriter();
      const body = fixServiceCreate(g.body, g.aux);
      return {
        actor,
        body,
        req: json("POST", "/v1/services", body),
        verify: async (ans, sent) => {
          actor.services++;
          expectServiceCreated(ans.body.data, sent, actor.tenant);
          await expectReadBack(actor, `/v1/services/${ans.body.data.id}`, ans.body.data);
        },
      };
    },
  },
  "GET /v1/services": {
    build: async (g) => {
      const query = listParams(g);
      return {
        actor: reader,
        req: { method: "GET", path: `/v1/services${queryString(query)}` },
        verify: async (ans) => {
          const where: [string, unknown][] = query.mode ? [["mode = ?", query.mode]] : [];
          await expectPage(
            ans,
            "services",
            reader.tenant.id,
            where,
            (query.limit as number) ?? 20,
            (query.offset as number) ?? 0,
          );
        },
      };
    },
  },
  "GET /v1/services/{id}": {
    build: async (g) => ({
      actor: reader,
      req: { method: "GET", path: `/v1/services/${pick(readerIds.services, g.aux.picks[0])}` },
    }),
  },
  "GET /v1/services/{id}/discovery": {
    build: async (g) => ({
      actor: reader,
      req: { method: "GET", path: `/v1/services/${pick(readerIds.services, g.aux.picks[0])}/discovery` },
    }),
  },
  "PATCH /v1/services/{id}": {
    build: async (g) => {
      const actor = await currentWriter();
      const before = await freshService(actor, g.aux);
      const body = fixServiceUpdate(g.body, before, g.aux);
      return {
        actor,
        body,
        req: json("PATCH", `/v1/services/${before.id}`, body),
        verify: async (ans, sent) => {
          expectServicePatched(ans.body.data, before, sent);
          await expectReadBack(actor, `/v1/services/${before.id}`, ans.body.data);
        },
      };
    },
  },
  "DELETE /v1/services/{id}": {
    build: async (g) => {
      const actor = await currentWriter();
      const service = await freshService(actor, g.aux, g.aux.flags[0]);
      return {
        actor,
        req: { method: "DELETE", path: `/v1/services/${service.id}` },
        verify: async (ans) => {
          expect(ans.body.data).toEqual({ id: service.id, deleted: true });
          for (const path of [`/v1/services/${service.id}`, ...service.Paywall.map((p: Json) => `/v1/paywalls/${p.id}`)]) {
            expect((await send(actor, { method: "GET", path })).status, path).toBe(404);
          }
        },
      };
    },
  },
  "POST /v1/paywalls": {
    build: async (g) => {
      const actor = await currentWriter();
      const body = fixPaywallCreate(g.body, actor, g.aux);
      return {
        actor,
        body,
        req: json("POST", "/v1/paywalls", body),
        verify: async (ans, sent) => {
          actor.paywalls++;
          expectPaywallCreated(ans.body.data, sent, actor.tenant);
          await expectReadBack(actor, `/v1/paywalls/${ans.body.data.id}`, ans.body.data);
        },
      };
    },
  },
  "GET /v1/paywalls": {
    build: async (g) => {
      const query = listParams(g);
      if (query.serviceId !== undefined) {
        if (g.aux.flags[0]) delete query.serviceId;
        else query.serviceId = pick(readerIds.services, g.aux.picks[0]); // an unknown serviceId is 404
      }
      return {
        actor: reader,
        req: { method: "GET", path: `/v1/paywalls${queryString(query)}` },
        verify: async (ans) => {
          const where: [string, unknown][] = [];
          if (query.serviceId) where.push(["service_id = ?", query.serviceId]);
          if (query.enabled) where.push(["enabled = ?", query.enabled === "true" ? 1 : 0]);
          await expectPage(
            ans,
            "paywalls",
            reader.tenant.id,
            where,
            (query.limit as number) ?? 20,
            (query.offset as number) ?? 0,
          );
        },
      };
    },
  },
  "GET /v1/paywalls/{id}": {
    build: async (g) => ({
      actor: reader,
      req: { method: "GET", path: `/v1/paywalls/${pick(readerIds.paywalls, g.aux.picks[0])}` },
    }),
  },
  "PATCH /v1/paywalls/{id}": {
    build: async (g) => {
      const actor = await currentWriter();
      const before = await freshPaywall(actor, g.aux);
      const body = fixPaywallUpdate(g.body, before, actor, g.aux);
      return {
        actor,
        body,
        req: json("PATCH", `/v1/paywalls/${before.id}`, body),
        verify: async (ans, sent) => {
          expectPaywallPatched(ans.body.data, before, sent, actor.tenant);
          await expectReadBack(actor, `/v1/paywalls/${before.id}`, ans.body.data);
        },
      };
    },
  },
  "DELETE /v1/paywalls/{id}": {
    build: async (g) => {
      const actor = await currentWriter();
      const paywall = await freshPaywall(actor, g.aux);
      return {
        actor,
        req: { method: "DELETE", path: `/v1/paywalls/${paywall.id}` },
        verify: async (ans) => {
          expect(ans.body.data).toEqual({ id: paywall.id, deleted: true });
          expect((await send(actor, { method: "GET", path: `/v1/paywalls/${paywall.id}` })).status).toBe(404);
        },
      };
    },
  },
  "GET /v1/transactions": { build: async (g) => historyList(g, "transactions") },
  "GET /v1/transactions/{id}": {
    build: async (g) => ({
      actor: reader,
      req: { method: "GET", path: `/v1/transactions/${pick(readerIds.transactions, g.aux.picks[0])}` },
    }),
  },
  "GET /v1/channels": {
    build: async (g) => {
      const query = listParams(g);
      if (query.paywallId !== undefined && g.aux.flags[0]) query.paywallId = pick(readerIds.paywalls, g.aux.picks[0]);
      return {
        actor: reader,
        req: { method: "GET", path: `/v1/channels${queryString(query)}` },
        verify: async (ans) => {
          const columns = { paywallId: "paywall_id", status: "status", network: "network" };
          const where = Object.entries(columns).flatMap(([param, column]): [string, unknown][] =>
            query[param] === undefined ? [] : [[`${column} = ?`, query[param]]],
          );
          const [limit, offset] = [(query.limit as number) ?? 20, (query.offset as number) ?? 0];
          await expectPage(ans, "channels", reader.tenant.id, where, limit, offset, "opened_at");
        },
      };
    },
  },
  "GET /v1/channels/{id}": {
    build: async (g) => ({
      actor: reader,
      req: { method: "GET", path: `/v1/channels/${pick(readerIds.channels, g.aux.picks[0])}` },
    }),
  },
  "GET /v1/events": { build: async (g) => historyList(g, "events") },
  "GET /v1/events/{id}": {
    build: async (g) => ({ actor: reader, req: { method: "GET", path: `/v1/events/${pick(readerIds.events, g.aux.picks[0])}` } }),
  },
  // Webhooks: valid requests only (their bodies are small and fixed); every created endpoint is deleted again, so a
  // tenant never reaches the endpoint cap.
  "POST /v1/webhook-endpoints": {
    build: async () => {
      const actor = await currentWriter();
      const body = { url: HOOK_URL, events: ["transaction.completed"], description: "fuzz" };
      return {
        actor,
        body,
        req: json("POST", "/v1/webhook-endpoints", body),
        verify: async (ans) => {
          expect(ans.body.data).toMatchObject({ url: HOOK_URL, enabled: true, secret: expect.stringMatching(/^whsec_/) });
          await send(actor, { method: "DELETE", path: `/v1/webhook-endpoints/${ans.body.data.id}` });
        },
      };
    },
  },
  "GET /v1/webhook-endpoints": {
    build: async (g) => ({ actor: reader, req: { method: "GET", path: `/v1/webhook-endpoints${queryString(listParams(g))}` } }),
  },
  "GET /v1/webhook-endpoints/{id}": {
    build: async () => ({ actor: reader, req: { method: "GET", path: `/v1/webhook-endpoints/${await readerEndpoint()}` } }),
  },
  "GET /v1/webhook-endpoints/{id}/deliveries": {
    build: async () => ({
      actor: reader,
      req: { method: "GET", path: `/v1/webhook-endpoints/${await readerEndpoint()}/deliveries` },
    }),
  },
  "PATCH /v1/webhook-endpoints/{id}": { build: async () => onFreshEndpoint("PATCH", "", { description: "patched" }) },
  "DELETE /v1/webhook-endpoints/{id}": { build: async () => onFreshEndpoint("DELETE", "", undefined, false) },
  "POST /v1/webhook-endpoints/{id}/secret/roll": {
    build: async () => onFreshEndpoint("POST", "/secret/roll", { gracePeriodSeconds: 60 }),
  },
  "POST /v1/webhook-endpoints/{id}/test": { build: async () => onFreshEndpoint("POST", "/test") },
  "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry": {
    build: async () => {
      const actor = await currentWriter();
      const id = await newEndpoint(actor);
      const delivery = (await send(actor, { method: "POST", path: `/v1/webhook-endpoints/${id}/test` })).body.data.id;
      return {
        actor,
        req: { method: "POST", path: `/v1/webhook-endpoints/${id}/deliveries/${delivery}/retry` },
        verify: async () => void (await send(actor, { method: "DELETE", path: `/v1/webhook-endpoints/${id}` })),
      };
    },
  },
};

const HOOK_URL = "https://hooks.receiver.test/inbox/fuzz";

async function newEndpoint(actor: Actor): Promise<string> {
  const res = await send(actor, json("POST", "/v1/webhook-endpoints", { url: HOOK_URL, events: ["transaction.completed"] }));
  return res.body.data.id;
}

/** The reader's webhook endpoint (seeded). */
const readerEndpoint = async () => readerIds["webhook-endpoints"][0] as string;

/** A request on a fresh endpoint of the current writer, deleted afterwards (unless the request deletes it). */
async function onFreshEndpoint(method: string, suffix: string, body?: Json, cleanUp = true): Promise<Prepared> {
  const actor = await currentWriter();
  const id = await newEndpoint(actor);
  const path = `/v1/webhook-endpoints/${id}${suffix}`;
  return {
    actor,
    ...(body === undefined ? {} : { body }),
    req: body === undefined ? { method, path } : json(method, path, body),
    verify: async () => {
      if (cleanUp) await send(actor, { method: "DELETE", path: `/v1/webhook-endpoints/${id}` });
    },
  };
}

/** History lists: filters from the schema; ids sometimes replaced by existing ones, `from` ≤ `to`. */
export async function historyList(g: Generated, table: "transactions" | "events"): Promise<Prepared> {
  const query = listParams(g);
  if (query.paywallId !== undefined && g.aux.flags[0]) query.paywallId = pick(readerIds.paywalls, g.aux.picks[0]);
  if (query.serviceId !== undefined && g.aux.flags[1]) query.serviceId = pick(readerIds.services, g.aux.picks[1]);
  if (g.aux.flags[2] && query.from !== undefined) query.from = new Date(Date.now() - 3 * 86_400_000).toISOString(); // inside the demo week
  if (query.from !== undefined && query.to !== undefined && Date.parse(String(query.from)) > Date.parse(String(query.to))) {
    [query.from, query.to] = [query.to, query.from]; // from ≤ to
  }
  return {
    actor: reader,
    req: { method: "GET", path: `/v1/${table}${queryString(query)}` },
    verify: async (ans) => {
      const where: [string, unknown][] = [];
      const columns: Record<string, string> = {
        paywallId: "paywall_id",
        serviceId: "service_id",
        status: "status",
        network: "network",
        protocol: "protocol",
        eventType: "event_type",
      };
      for (const [param, column] of Object.entries(columns))
        if (query[param] !== undefined) where.push([`${column} = ?`, query[param]]);
      if (query.from !== undefined) where.push(["created_at >= ?", Date.parse(String(query.from))]);
      if (query.to !== undefined) where.push(["created_at <= ?", Date.parse(String(query.to))]);
      await expectPage(ans, table, reader.tenant.id, where, (query.limit as number) ?? 20, (query.offset as number) ?? 0);
      if (table === "events" && query.eventType === undefined) {
        const { REQUEST, SUCCESS, ERROR } = ans.body.meta.stats;
        expect(REQUEST + SUCCESS + ERROR).toBe(ans.body.meta.pagination.total);
      }
    },
  };
}

export const OPERATION_IDS = Object.keys(DRIVERS);

/** Every mutation of every property with FUZZ_RUNS ≥ 100; by default one of each family per property (rotating). */
export const thorough = RUNS >= 100;
export function onePerGroup(mutations: BodyMutation[]): BodyMutation[] {
  const groups = Map.groupBy(mutations, (m) => `${m.at}|${m.kind}`);
  return [...groups.values()].map((group, i) => group[i % group.length] as BodyMutation);
}

export const WRITES = new Set(["POST", "PATCH", "DELETE"]);

/** Sends a prepared request (or a variant of it), checks the oracles, and the tenant's rows when a write is refused. */
export async function exchange(e: OpEntry, prepared: Prepared, req: Req = prepared.req): Promise<Answer> {
  const watch = WRITES.has(req.method) && prepared.actor ? prepared.actor.tenant.id : undefined;
  const before = watch ? await snapshot(watch) : undefined;
  const ans = await send(prepared.actor, req);
  expectDocumented(e, req, ans);
  if (watch && ans.status >= 400)
    expect(await snapshot(watch), `a refused write changed the database: ${describeExchange(req, ans)}`).toBe(before);
  return ans;
}

/** A body variant: `400 VALIDATION_ERROR` if its parsed value breaks the documented schema; else 2xx (checked) or a documented 4xx. */
export async function tryBody(
  e: OpEntry,
  prepared: Prepared,
  text: string,
  kind: string,
  extra: Partial<Req> = {},
): Promise<Answer> {
  countKind(kind);
  const req = { ...prepared.req, text, ...extra };
  const ans = await exchange(e, prepared, req);
  const parsed = tryParse(text);
  const errors = parsed.ok ? validateSchema(doc, requestSchema(e.op) as Schema, parsed.value) : ["malformed JSON"];
  if (errors.length > 0 && ans.status !== 413 && ans.status !== 415) {
    expect(
      { status: ans.status, code: ans.body.code },
      `${kind} (${errors.slice(0, 3).join("; ")}): ${describeExchange(req, ans)}`,
    ).toEqual({
      status: 400,
      code: "VALIDATION_ERROR",
    });
  }
  if (ans.status < 300) {
    expect(errors, `a body against the schema was accepted: ${describeExchange(req, ans)}`).toEqual([]);
    await wellFormedFailures(() => prepared.verify?.(ans, parsed.ok ? parsed.value : undefined));
  }
  return ans;
}

/** A fuzz suite's file: the fuzzing tenants set up once, and the run's summary printed at the end. */
export function useFuzzSuite(): void {
  beforeAll(async () => {
    await setUpFuzzing();
  }, TIMEOUT);
  afterAll(() => {
    printToRunner(fuzzSummary());
  });
}
