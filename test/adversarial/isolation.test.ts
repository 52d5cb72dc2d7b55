// The isolation matrix (OWASP API1, API2, API5): every operation of /openapi.json × every identity, with the
// expected status and code computed by one table (IDENTITIES, then OWNERSHIP), never written per case.
//
// - Operations, their scopes and their id-bearing filters and body fields come from the served document.
// - Requests are templates naming resources by token (`@A.service`, `@B.paywall`, `@none`); the ownership rule reads
//   the tokens, so "whose ids does this request name" is data, not a hand-written expectation.
// - Every refused write is checked against D1: the services and paywalls rows of both tenants are unchanged.
// - Every allowed response is checked not to mention the other tenant's ids.
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getConfig, keyRing } from "../../src/core/config.ts";
import { SCOPES, type Scope } from "../../src/core/keys/scopes.ts";
import { requestEventIdOf } from "../../src/core/ledger/ids.ts";
import { sealWebhookSecret } from "../../src/core/webhooks/secrets.ts";
import { getDb } from "../../src/db/client.ts";
import type { PaywallRow, Tenant } from "../../src/db/schema.ts";
import { insertWebhookDelivery, insertWebhookEndpointWithinCap } from "../../src/db/webhooks.ts";
import { randomHex } from "../../src/lib/ids.ts";
import { newWebhookSecret } from "../../src/lib/standard-webhooks.ts";
import { ALL_SCOPES, GRANTED_BY } from "../fixtures/spec.ts";
import { createPaywallFor } from "../history/support.ts";
import { applyRecords, channelOf, channelRecord } from "../sessions/channels-support.ts";
import { canary } from "../support/canaries.ts";
import { api } from "../support/client.ts";
import { printToRunner } from "../support/console.ts";
import { createApiKey, createTenant } from "../support/factories.ts";
import { recordPayment } from "../support/payments.ts";

// ---------------------------------------------------------------------------------------------------------------
// The document

interface DocParameter {
  name: string;
  in: string;
}
interface DocOperation {
  "x-scope"?: string;
  security?: unknown[];
  parameters?: DocParameter[];
  requestBody?: { content?: Record<string, { schema?: { $ref?: string; properties?: Record<string, unknown> } }> };
}
interface Doc {
  paths: Record<string, Record<string, DocOperation>>;
  components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> };
}

const doc = (await api<Doc>("/openapi.json")).body;
const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];

interface Route {
  /** `GET /v1/services/{id}` */
  key: string;
  method: string;
  template: string;
  /** The operation's `x-scope`; null where any valid key may call it. */
  scope: Scope | null;
  /** No security requirement: answers without a key. */
  public: boolean;
  /** Query parameters and body fields that name a resource by id (`serviceId`, `paywallId`). */
  queryRefs: string[];
  bodyRefs: string[];
  /** Conditional request headers the operation documents (`if-match`, `if-none-match`). */
  conditionals: string[];
}

function bodyProperties(op: DocOperation): string[] {
  const schema = op.requestBody?.content?.["application/json"]?.schema;
  if (!schema) return [];
  const resolved = schema.$ref ? doc.components?.schemas?.[schema.$ref.split("/").pop() ?? ""] : schema;
  return Object.keys(resolved?.properties ?? {});
}

function routeOf(template: string, method: string, op: DocOperation): Route {
  const key = `${method.toUpperCase()} ${template}`;
  const isPublic = !op.security || op.security.length === 0;
  const named = op["x-scope"];
  let scope: Scope | null = null;
  if (named !== undefined) {
    if (!(SCOPES as readonly string[]).includes(named)) throw new Error(`${key}: the document names an unknown scope "${named}"`);
    if (isPublic) throw new Error(`${key}: x-scope on an operation without a security requirement`);
    scope = named as Scope;
  }
  return {
    key,
    method: method.toUpperCase(),
    template,
    scope,
    public: isPublic,
    queryRefs: (op.parameters ?? []).filter((p) => p.in === "query" && /Id$/.test(p.name)).map((p) => p.name),
    bodyRefs: bodyProperties(op).filter((name) => /Id$/.test(name)),
    conditionals: (op.parameters ?? []).filter((p) => p.in === "header" && /^if-/i.test(p.name)).map((p) => p.name),
  };
}

const ROUTES: Route[] = Object.entries(doc.paths).flatMap(([template, item]) =>
  Object.entries(item)
    .filter(([method]) => HTTP_METHODS.includes(method))
    .map(([method, op]) => routeOf(template, method, op)),
);

// ---------------------------------------------------------------------------------------------------------------
// Requests, as templates. Tokens: `@A.<kind>` / `@B.<kind>` (a resource of tenant A or B), `@none` (an id nobody
// holds), `@unique` (a fresh slug or name), `@canary:<label>` (a registered secret canary).

type Owner = "A" | "B";
type Kind = "service" | "paywall" | "transaction" | "event" | "endpoint" | "delivery" | "channel";
type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

interface RequestTemplate {
  /** Path parameter `{id}`. */
  id?: string;
  /** Path parameter `{deliveryId}`. */
  deliveryId?: string;
  query?: Record<string, string>;
  body?: Json;
  /** For a list or read that succeeds: the caller's resource that must be in the answer. */
  includes?: Kind;
}

const REF_KINDS: Record<string, Kind> = { serviceId: "service", paywallId: "paywall" };

const serviceBody = (): Json => ({
  name: "@unique",
  baseUrl: "https://api.example.com",
  authMethod: "bearer",
  authConfig: { bearerToken: "@canary:isolation authConfig.bearerToken" },
  networks: ["base-sepolia"],
  mode: "testnet",
});

const routePaywallBody = (service: string): Json => ({
  slug: "@unique",
  name: "Matrix paywall",
  targetType: "ROUTE",
  targetRoute: "/paid",
  serviceId: service,
  price: "1000",
  currency: "USDC",
  networks: ["base-sepolia"],
  fulfillmentMode: "PROXY",
  headers: [{ key: "X-Upstream-Secret", value: "@canary:isolation paywall header" }],
});

/** One concrete request per documented operation, addressing tenant A's resources. */
const REQUESTS: Record<string, RequestTemplate> = {
  "GET /v1/health": {},
  "GET /v1/me": {},
  "POST /v1/services": { body: serviceBody() },
  "GET /v1/services": { query: { limit: "100" }, includes: "service" },
  "GET /v1/services/{id}": { id: "@A.service", includes: "service" },
  "PATCH /v1/services/{id}": { id: "@A.service", body: { description: "patched by the isolation matrix" } },
  "DELETE /v1/services/{id}": { id: "@A.service" },
  "GET /v1/services/{id}/discovery": { id: "@A.service", includes: "service" },
  "POST /v1/paywalls": { body: routePaywallBody("@A.service") },
  "GET /v1/paywalls": { query: { limit: "100" }, includes: "paywall" },
  "GET /v1/paywalls/{id}": { id: "@A.paywall", includes: "paywall" },
  "PATCH /v1/paywalls/{id}": { id: "@A.paywall", body: { name: "patched by the isolation matrix", enabled: false } },
  "DELETE /v1/paywalls/{id}": { id: "@A.paywall" },
  "GET /v1/transactions": { query: { limit: "100" }, includes: "transaction" },
  "GET /v1/transactions/{id}": { id: "@A.transaction", includes: "transaction" },
  "GET /v1/channels": { query: { limit: "100" }, includes: "channel" },
  "GET /v1/channels/{id}": { id: "@A.channel", includes: "channel" },
  "GET /v1/events": { query: { limit: "100" }, includes: "event" },
  "GET /v1/events/{id}": { id: "@A.event", includes: "event" },
  "POST /v1/webhook-endpoints": {
    body: { url: "https://hooks.receiver.test/inbox/isolation", events: ["transaction.completed"] },
  },
  "GET /v1/webhook-endpoints": { query: { limit: "100" }, includes: "endpoint" },
  "GET /v1/webhook-endpoints/{id}": { id: "@A.endpoint", includes: "endpoint" },
  "PATCH /v1/webhook-endpoints/{id}": { id: "@A.endpoint", body: { description: "patched by the isolation matrix" } },
  "DELETE /v1/webhook-endpoints/{id}": { id: "@A.endpoint" },
  "POST /v1/webhook-endpoints/{id}/secret/roll": { id: "@A.endpoint", body: { gracePeriodSeconds: 60 } },
  "POST /v1/webhook-endpoints/{id}/test": { id: "@A.endpoint" },
  "GET /v1/webhook-endpoints/{id}/deliveries": { id: "@A.endpoint", includes: "delivery" },
  "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry": { id: "@A.endpoint", deliveryId: "@A.delivery" },
};

/**
 * Where another tenant's id in the path is answered 404, as an id nobody holds (webhooks reveal no existence; a
 * channel's id is public on chain, whose it is here is not).
 */
const HIDES_FOREIGN = (template: string) => template.startsWith("/v1/webhook-endpoints/") || template.startsWith("/v1/channels/");

/** The success status of an allowed request. */
const SUCCESS_STATUS: Record<string, number> = {
  "POST /v1/webhook-endpoints/{id}/secret/roll": 200,
  "POST /v1/webhook-endpoints/{id}/test": 202,
  "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry": 202,
};

/**
 * Requests of tenant B naming tenant A's resources in a filter or a body field (and, as controls, tenant A naming
 * its own). Every id-bearing query parameter and body field of the document must have one (checked below).
 */
interface Reference {
  route: string;
  /** The document's parameter or body field it exercises (`id`: the path). */
  field: string;
  caller: Owner;
  request: RequestTemplate;
}

const REFERENCES: Reference[] = [
  ...(["A", "B"] as const).flatMap((caller): Reference[] => [
    {
      route: "GET /v1/paywalls",
      field: "serviceId",
      caller,
      request: { query: { serviceId: "@A.service" }, includes: "paywall" },
    },
    {
      route: "GET /v1/transactions",
      field: "paywallId",
      caller,
      request: { query: { paywallId: "@A.paywall" }, includes: "transaction" },
    },
    {
      route: "GET /v1/transactions",
      field: "serviceId",
      caller,
      request: { query: { serviceId: "@A.service" }, includes: "transaction" },
    },
    { route: "GET /v1/events", field: "paywallId", caller, request: { query: { paywallId: "@A.paywall" }, includes: "event" } },
    {
      route: "GET /v1/channels",
      field: "paywallId",
      caller,
      request: { query: { paywallId: "@A.paywall" }, includes: "channel" },
    },
    { route: "GET /v1/events", field: "serviceId", caller, request: { query: { serviceId: "@A.service" }, includes: "event" } },
    { route: "POST /v1/paywalls", field: "serviceId", caller, request: { body: routePaywallBody("@A.service") } },
    {
      route: "PATCH /v1/paywalls/{id}",
      field: "serviceId",
      caller,
      request: { id: `@${caller}.paywall`, body: { serviceId: "@A.service" } },
    },
  ]),
  // Tenant B's own id beside tenant A's: one foreign id is enough to refuse.
  {
    route: "GET /v1/transactions",
    field: "serviceId",
    caller: "B",
    request: { query: { paywallId: "@B.paywall", serviceId: "@A.service" } },
  },
  {
    route: "GET /v1/events",
    field: "paywallId",
    caller: "B",
    request: { query: { paywallId: "@A.paywall", serviceId: "@B.service" } },
  },
  {
    route: "POST /v1/paywalls",
    field: "serviceId",
    caller: "B",
    request: {
      body: {
        slug: "@unique",
        name: "Proxy into a foreign service",
        targetType: "PROXY",
        targetUrl: "https://api.example.com/x",
        serviceId: "@A.service",
        price: "1",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
      },
    },
  },
  {
    route: "PATCH /v1/paywalls/{id}",
    field: "serviceId",
    caller: "B",
    request: { id: "@B.paywall", body: { serviceId: "@A.service", targetRoute: "/moved", networks: ["base-sepolia"] } },
  },
  // A delivery of another tenant through the caller's own endpoint: as unknown.
  {
    route: "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry",
    field: "deliveryId",
    caller: "B",
    request: { id: "@B.endpoint", deliveryId: "@A.delivery" },
  },
  {
    route: "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry",
    field: "deliveryId",
    caller: "A",
    request: { id: "@A.endpoint", deliveryId: "@none" },
  },
  // An id nobody holds: 404 in the path, INVALID_SERVICE in a body.
  ...ROUTES.filter((r) => r.template.endsWith("{id}")).map(
    (r): Reference => ({ route: r.key, field: "id", caller: "A", request: { ...REQUESTS[r.key], id: "@none" } }),
  ),
  { route: "POST /v1/paywalls", field: "serviceId", caller: "A", request: { body: routePaywallBody("@none") } },
];

// ---------------------------------------------------------------------------------------------------------------
// The one table: identity → verdict of authentication and scope; then the ownership rule for what passed.

type Outcome = { kind: "deny"; status: number; code: string; metered: boolean } | { kind: "allow"; metered: boolean };

/**
 * `metered`: the request counted against the key's quota (its `RateLimit-*` headers carry the key's numbers). Any other
 * request that reaches authentication, or needs no key, is counted against the client address (the address's numbers).
 */
const deny = (status: number, code: string, metered: boolean): Outcome => ({ kind: "deny", status, code, metered });
const ALLOW: Outcome = { kind: "allow", metered: true };
const PUBLIC: Outcome = { kind: "allow", metered: false };

const scopeVerdict = (granted: Scope[]) => (route: Route) =>
  route.scope === null || GRANTED_BY[route.scope].some((s) => granted.includes(s)) ? null : deny(403, "INSUFFICIENT_SCOPE", true);

interface Keys {
  owner: string;
  ownerOther: string;
  foreign: string;
  revoked: string;
  paused: string;
  expired: string;
  revokedExpired: string;
  pausedExpired: string;
  ipRestricted: string;
  ipRestrictedRevoked: string;
  ipRestrictedNoScopes: string;
  noScopes: string;
  only: Record<Scope, string>;
  allBut: Record<Scope, string>;
}

const ALLOWED_NET = "203.0.113.0/24";
const INSIDE_IP = "::ffff:203.0.113.9";
const OUTSIDE_IP = "198.51.100.7";

interface Identity {
  name: string;
  tenant: Owner;
  /** Headers (and client address) of the request. */
  send: (keys: Keys, route: Route) => { headers: Record<string, string>; ip?: string };
  /** The verdict of authentication, IP allowlist and scope: a refusal, or null if the request gets through. */
  verdict: (route: Route) => Outcome | null;
}

const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const invalid = () => deny(401, "INVALID_API_KEY", false);

const IDENTITIES: Identity[] = [
  { name: "no key", tenant: "A", send: () => ({ headers: {} }), verdict: invalid },
  { name: "an empty Bearer", tenant: "A", send: () => ({ headers: { authorization: "Bearer " } }), verdict: invalid },
  { name: "a malformed key", tenant: "A", send: () => bearer("mpk_not-a-key"), verdict: invalid },
  {
    name: "the owner's key in upper case",
    tenant: "A",
    send: (k) => bearer(`mpk_${k.owner.slice(4).toUpperCase()}`),
    verdict: invalid,
  },
  {
    name: "the owner's key under the Basic scheme",
    tenant: "A",
    send: (k) => ({ headers: { authorization: `Basic ${k.owner}` } }),
    verdict: invalid,
  },
  { name: "a well-formed key nobody holds", tenant: "A", send: () => bearer(`mpk_${"0f".repeat(32)}`), verdict: invalid },
  {
    name: "two valid keys that disagree (Authorization vs X-Api-Key)",
    tenant: "A",
    send: (k) => ({ headers: { authorization: `Bearer ${k.owner}`, "x-api-key": k.ownerOther } }),
    verdict: invalid,
  },
  { name: "a revoked key", tenant: "A", send: (k) => bearer(k.revoked), verdict: () => deny(401, "KEY_REVOKED", false) },
  { name: "a paused key", tenant: "A", send: (k) => bearer(k.paused), verdict: () => deny(401, "KEY_INACTIVE", false) },
  { name: "an expired key", tenant: "A", send: (k) => bearer(k.expired), verdict: () => deny(401, "KEY_EXPIRED", false) },
  {
    name: "a revoked, expired key",
    tenant: "A",
    send: (k) => bearer(k.revokedExpired),
    verdict: () => deny(401, "KEY_REVOKED", false),
  },
  {
    name: "a paused, expired key",
    tenant: "A",
    send: (k) => bearer(k.pausedExpired),
    verdict: () => deny(401, "KEY_EXPIRED", false),
  },
  {
    name: "a revoked IP-restricted key from outside its allowlist",
    tenant: "A",
    send: (k) => ({ ...bearer(k.ipRestrictedRevoked), ip: OUTSIDE_IP }),
    verdict: () => deny(401, "KEY_REVOKED", false),
  },
  {
    name: "an IP-restricted key from outside its allowlist",
    tenant: "A",
    send: (k) => ({ ...bearer(k.ipRestricted), ip: OUTSIDE_IP }),
    verdict: () => deny(403, "IP_NOT_ALLOWED", false),
  },
  {
    name: "an IP-restricted key without a client address",
    tenant: "A",
    send: (k) => bearer(k.ipRestricted),
    verdict: () => deny(403, "IP_NOT_ALLOWED", false),
  },
  {
    name: "an IP-restricted key without scopes from outside its allowlist",
    tenant: "A",
    send: (k) => ({ ...bearer(k.ipRestrictedNoScopes), ip: OUTSIDE_IP }),
    verdict: () => deny(403, "IP_NOT_ALLOWED", false),
  },
  {
    name: "an IP-restricted key from inside its allowlist (IPv4-mapped IPv6)",
    tenant: "A",
    send: (k) => ({ ...bearer(k.ipRestricted), ip: INSIDE_IP }),
    verdict: () => null,
  },
  { name: "the owner's key (Authorization: Bearer)", tenant: "A", send: (k) => bearer(k.owner), verdict: () => null },
  { name: "the owner's key (X-Api-Key)", tenant: "A", send: (k) => ({ headers: { "x-api-key": k.owner } }), verdict: () => null },
  { name: "a key without scopes", tenant: "A", send: (k) => bearer(k.noScopes), verdict: scopeVerdict([]) },
  ...ALL_SCOPES.map(
    (scope): Identity => ({
      name: `a key with only ${scope}`,
      tenant: "A",
      send: (k) => bearer(k.only[scope]),
      verdict: scopeVerdict([scope]),
    }),
  ),
  {
    name: "a key with every scope but those granting the route's",
    tenant: "A",
    send: (k, route) => bearer(route.scope ? k.allBut[route.scope] : k.noScopes),
    verdict: (route) => (route.scope === null ? null : deny(403, "INSUFFICIENT_SCOPE", true)),
  },
  { name: "another tenant's key with every scope", tenant: "B", send: (k) => bearer(k.foreign), verdict: () => null },
];

const tokenOwner = (value: string): Owner | "none" | null => {
  if (value === "@none") return "none";
  const m = /^@([AB])\./.exec(value);
  return m ? (m[1] as Owner) : null;
};

const ownersIn = (value: unknown): (Owner | "none")[] => {
  if (typeof value === "string") {
    const owner = tokenOwner(value);
    return owner ? [owner] : [];
  }
  if (Array.isArray(value)) return value.flatMap(ownersIn);
  if (value && typeof value === "object") return Object.values(value).flatMap(ownersIn);
  return [];
};

/**
 * What a request that passed authentication and scope gets, from the owners of the ids it names: another tenant's id
 * in the path or a filter is 403 FORBIDDEN, in a body 400 INVALID_SERVICE; an id nobody holds is 404 in the path and
 * 400 INVALID_SERVICE in a body. (A filter naming an id nobody holds differs by route by design: 404 on paywalls,
 * an empty page on history, whose records outlive their paywall; the table has no such case.)
 */
function ownership(caller: Owner, request: RequestTemplate, route: Route): Outcome {
  const pathOwners = [request.id, request.deliveryId].map((id) => (id ? tokenOwner(id) : null));
  if (pathOwners.includes("none")) return deny(404, "NOT_FOUND", true);
  if (pathOwners.some((o) => o && o !== caller)) {
    return HIDES_FOREIGN(route.template) ? deny(404, "NOT_FOUND", true) : deny(403, "FORBIDDEN", true);
  }
  if (ownersIn(request.query).some((o) => o !== caller && o !== "none")) return deny(403, "FORBIDDEN", true);
  if (ownersIn(request.body).some((o) => o !== caller)) return deny(400, "INVALID_SERVICE", true);
  return ALLOW;
}

function expected(route: Route, identity: Identity, request: RequestTemplate): Outcome {
  if (route.public) return PUBLIC;
  return identity.verdict(route) ?? ownership(identity.tenant, request, route);
}

const describeOutcome = (o: Outcome) => (o.kind === "deny" ? `${o.status} ${o.code}` : "success");

// ---------------------------------------------------------------------------------------------------------------
// The cases

interface Case {
  name: string;
  route: Route;
  identity: Identity;
  request: RequestTemplate;
  outcome: Outcome;
}

const routeByKey = new Map(ROUTES.map((r) => [r.key, r]));
const missingRequests = ROUTES.filter((r) => !REQUESTS[r.key]).map((r) => r.key);

const MATRIX: Case[] = ROUTES.filter((r) => REQUESTS[r.key]).flatMap((route) =>
  IDENTITIES.map((identity) => {
    const request = REQUESTS[route.key] as RequestTemplate;
    const outcome = expected(route, identity, request);
    return { name: `${route.key} × ${identity.name} → ${describeOutcome(outcome)}`, route, identity, request, outcome };
  }),
);

const byCaller: Record<Owner, Identity> = {
  A: IDENTITIES.find((i) => i.name === "the owner's key (Authorization: Bearer)") as Identity,
  B: IDENTITIES.find((i) => i.name === "another tenant's key with every scope") as Identity,
};

/** `id=@none, query serviceId=@A.service`: the ids a request names, by token. */
function refSummary(request: RequestTemplate): string {
  const parts: string[] = [];
  if (request.id) parts.push(`id=${request.id}`);
  if (request.deliveryId) parts.push(`deliveryId=${request.deliveryId}`);
  for (const [k, v] of Object.entries(request.query ?? {})) if (tokenOwner(v)) parts.push(`query ${k}=${v}`);
  if (request.body && typeof request.body === "object" && !Array.isArray(request.body)) {
    for (const [k, v] of Object.entries(request.body)) if (typeof v === "string" && tokenOwner(v)) parts.push(`body ${k}=${v}`);
  }
  return parts.join(", ");
}

const REFERENCE_CASES: Case[] = REFERENCES.map(({ route: key, caller, request }) => {
  const route = routeByKey.get(key);
  if (!route) throw new Error(`reference case for ${key}, which the document does not list`);
  const identity = byCaller[caller];
  const outcome = expected(route, identity, request);
  return {
    name: `${key} by tenant ${caller} with ${refSummary(request)} → ${describeOutcome(outcome)}`,
    route,
    identity,
    request,
    outcome,
  };
});

// ---------------------------------------------------------------------------------------------------------------
// Fixtures

interface TenantFixture {
  tenant: Tenant;
  service: string;
  paywall: string;
  transaction: string;
  event: string;
  endpoint: string;
  delivery: string;
  channel: string;
  /** Everything that identifies this tenant or its data: must never appear in an answer to the other tenant. */
  ids: Set<string>;
}

let A: TenantFixture;
let B: TenantFixture;
let keys: Keys;
let ran = 0;

/** A payment of the paywall (PENDING) and its REQUEST event, as the gateway records them. */
async function history(paywall: PaywallRow): Promise<{ transaction: string; event: string }> {
  const { transactionId } = await recordPayment(paywall, { network: "base-sepolia", amount: "1000" });
  return { transaction: transactionId, event: requestEventIdOf(transactionId) };
}

async function tenantFixture(): Promise<TenantFixture> {
  const tenant = await createTenant();
  const paywall = await createPaywallFor(tenant, ["base-sepolia", "tempo-testnet"]);
  const { transaction, event } = await history(paywall);
  const ids = new Set([
    tenant.id,
    tenant.email,
    tenant.walletAddress,
    paywall.serviceId as string,
    paywall.id,
    transaction,
    event,
  ]);
  if (tenant.tempoWalletAddress) ids.add(tenant.tempoWalletAddress);
  const { endpoint, delivery } = await webhookFixture(tenant);
  ids.add(endpoint).add(delivery);
  // A session channel, as the records consumer writes it.
  const channel = channelOf(paywall);
  await applyRecords([channelRecord(channel)]);
  ids.add(channel.id).add(channel.payerAddress);
  return {
    tenant,
    service: paywall.serviceId as string,
    paywall: paywall.id,
    transaction,
    event,
    endpoint,
    delivery,
    channel: channel.id,
    ids,
  };
}

/** A webhook endpoint of the tenant and one delivery of it, written directly (the webhook API has its own tests). */
async function webhookFixture(tenant: Tenant): Promise<{ endpoint: string; delivery: string }> {
  const endpoint = `we_${randomHex(12)}`;
  const now = new Date();
  const secret = await sealWebhookSecret(keyRing(env), tenant.id, endpoint, "secret", newWebhookSecret());
  const row = {
    id: endpoint,
    tenantId: tenant.id,
    url: "https://hooks.receiver.test/inbox/isolation",
    events: ["transaction.completed" as const],
    secret,
    createdAt: now,
    updatedAt: now,
  };
  await insertWebhookEndpointWithinCap(getDb(env.DB), row, 1000);
  const delivery = `msg_test_${randomHex(12)}`;
  await insertWebhookDelivery(getDb(env.DB), {
    id: delivery,
    tenantId: tenant.id,
    endpointId: endpoint,
    eventType: "test",
    payload: JSON.stringify({ type: "test", timestamp: now.toISOString(), data: {} }),
    createdAt: now,
  });
  return { endpoint, delivery };
}

async function keyFor(fixture: TenantFixture, options: Parameters<typeof createApiKey>[0] = {}): Promise<string> {
  const made = await createApiKey({ tenant: fixture.tenant, ...options });
  fixture.ids.add(made.row.id);
  return made.key;
}

const past = () => new Date(Date.now() - 60_000);

beforeAll(async () => {
  A = await tenantFixture();
  B = await tenantFixture();
  const only = {} as Record<Scope, string>;
  const allBut = {} as Record<Scope, string>;
  for (const scope of ALL_SCOPES) {
    only[scope] = await keyFor(A, { scopes: [scope], name: `only ${scope}` });
    allBut[scope] = await keyFor(A, {
      scopes: ALL_SCOPES.filter((s) => !GRANTED_BY[scope].includes(s)),
      name: `all but ${scope}`,
    });
  }
  keys = {
    owner: await keyFor(A, { name: "owner" }),
    ownerOther: await keyFor(A, { name: "owner, second key" }),
    foreign: await keyFor(B, { name: "tenant B" }),
    revoked: await keyFor(A, { status: "revoked" }),
    paused: await keyFor(A, { status: "paused" }),
    expired: await keyFor(A, { expiresAt: past() }),
    revokedExpired: await keyFor(A, { status: "revoked", expiresAt: past() }),
    pausedExpired: await keyFor(A, { status: "paused", expiresAt: past() }),
    ipRestricted: await keyFor(A, { allowIps: [ALLOWED_NET] }),
    ipRestrictedRevoked: await keyFor(A, { allowIps: [ALLOWED_NET], status: "revoked" }),
    ipRestrictedNoScopes: await keyFor(A, { allowIps: [ALLOWED_NET], scopes: [] }),
    noScopes: await keyFor(A, { scopes: [] }),
    only,
    allBut,
  };
});

afterAll(() => {
  printToRunner(
    `isolation matrix: ${ran} cases (${MATRIX.length} = ${ROUTES.length} operations × ${IDENTITIES.length} identities, ` +
      `plus ${REFERENCE_CASES.length} cross-tenant and unknown references)`,
  );
});

// ---------------------------------------------------------------------------------------------------------------
// Running a case

let unique = 0;

/** A fresh service and paywall of the caller, for a write that is expected to succeed (the shared ones stay). */
async function freshTargets(owner: TenantFixture, route: Route): Promise<Partial<TenantFixture>> {
  if (route.template.startsWith("/v1/webhook-endpoints")) {
    const { endpoint } = await webhookFixture(owner.tenant);
    owner.ids.add(endpoint);
    return { endpoint };
  }
  const paywall = await createPaywallFor(owner.tenant, ["base-sepolia", "tempo-testnet"]);
  owner.ids.add(paywall.id).add(paywall.serviceId as string);
  return { service: paywall.serviceId as string, paywall: paywall.id };
}

function resolve(value: Json, fixtures: Record<Owner, Pick<TenantFixture, Kind>>): Json {
  if (typeof value === "string") {
    if (value === "@none") return "id_that_nobody_holds";
    if (value === "@unique") return `iso-${Date.now().toString(36)}-${(unique++).toString(36)}`;
    if (value.startsWith("@canary:")) return canary(value.slice("@canary:".length));
    const m = /^@([AB])\.(service|paywall|transaction|event|endpoint|delivery|channel)$/.exec(value);
    if (m) return fixtures[m[1] as Owner][m[2] as Kind];
    if (value.startsWith("@")) throw new Error(`unknown token ${value}`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, fixtures));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, fixtures)]));
  return value;
}

/** Every row of both tenants' services, paywalls and idempotency records, as stored. */
async function snapshot(): Promise<string> {
  const tables = await Promise.all(
    [
      ["services", "id"],
      ["paywalls", "id"],
      ["idempotency_keys", "key"],
      ["webhook_endpoints", "id"],
      ["webhook_deliveries", "id"],
    ].map(([table, order]) =>
      env.DB.prepare(`SELECT * FROM ${table} WHERE tenant_id IN (?, ?) ORDER BY tenant_id, ${order}`)
        .bind(A.tenant.id, B.tenant.id)
        .all(),
    ),
  );
  return JSON.stringify(tables.map((t) => t.results));
}

/**
 * Every write carries an `Idempotency-Key`: the nth allowed write of an operation uses the same key string for either
 * tenant (`matrix POST /v1/services #1`), so tenant B's writes reuse key strings that tenant A's writes have stored
 * answers under: each must get its own fresh answer, never a replay of the other tenant's. Within a tenant each case
 * has its own key, and a refused write stores nothing under its key (the snapshot covers `idempotency_keys`).
 */
const idempotencyKeyCounts = new Map<string, number>();
function idempotencyKeyFor(route: Route, tenant: Owner, kind: "allow" | "deny"): Record<string, string> {
  if (!["POST", "PATCH", "DELETE"].includes(route.method)) return {};
  const counter = `${tenant} ${route.key} ${kind}`;
  const n = (idempotencyKeyCounts.get(counter) ?? 0) + 1;
  idempotencyKeyCounts.set(counter, n);
  return { "idempotency-key": `matrix ${route.key} ${kind === "allow" ? "" : `refused by ${tenant} `}#${n}` };
}

function conditionalHeaders(route: Route, kind: "allow" | "deny"): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of route.conditionals) {
    const lower = name.toLowerCase();
    if (lower === "if-match") headers[lower] = kind === "deny" ? '"v999999"' : "*";
    else if (lower === "if-none-match") headers[lower] = kind === "deny" ? "*" : '"v999999"';
  }
  return headers;
}

async function runCase({ route, identity, request, outcome }: Case): Promise<void> {
  ran++;
  const caller = identity.tenant === "A" ? A : B;
  const other = identity.tenant === "A" ? B : A;
  const writes = route.method !== "GET";
  // A write expected to succeed works on fresh resources, so the shared ones stay for the other cases.
  const targets =
    outcome.kind === "allow" && (route.method === "PATCH" || route.method === "DELETE") ? await freshTargets(caller, route) : {};
  const fixtures = { A, B, [identity.tenant]: { ...caller, ...targets } } as Record<Owner, TenantFixture>;
  const resolved = resolve(request as unknown as Json, fixtures) as {
    id?: string;
    deliveryId?: string;
    query?: Record<string, string>;
    body?: Json;
  };

  const path = route.template.replace("{id}", resolved.id ?? "").replace("{deliveryId}", resolved.deliveryId ?? "");
  const query = resolved.query ? `?${new URLSearchParams(resolved.query)}` : "";
  const { headers: sent, ip } = identity.send(keys, route);
  // Conditional headers never change who may do what: a refusal carries the tag that would trigger 412 or 304 if it
  // were judged before access; an allowed request carries one that lets it through.
  const headers = {
    ...sent,
    ...conditionalHeaders(route, outcome.kind),
    ...idempotencyKeyFor(route, identity.tenant, outcome.kind),
  };
  const before = writes && outcome.kind === "deny" ? await snapshot() : null;

  const res = await api(`${path}${query}`, {
    method: route.method,
    headers,
    ...(ip === undefined ? {} : { ip }),
    ...(resolved.body === undefined ? {} : { body: resolved.body }),
  });
  const text = res.text;
  const body = JSON.parse(text);
  const context = `${route.method} ${path}${query} as ${identity.name}: ${text.slice(0, 400)}`;

  // The envelope, and its request id in the header.
  expect(body.meta?.requestId, context).toMatch(/^req_[0-9a-f]+$/);
  expect(res.headers.get("x-request-id"), context).toBe(body.meta.requestId);
  const { max, ipMax } = getConfig(env).rateLimit;
  const countedBy = outcome.metered ? "key" : outcome.kind === "allow" || outcome.status === 401 ? "address" : "nothing";
  const limit = res.headers.get("ratelimit-limit");
  const counted = limit === String(max) ? "key" : limit === String(ipMax) ? "address" : limit === null ? "nothing" : limit;
  expect(counted, `${context}\n(RateLimit headers: counted against the key, the address or nothing?)`).toBe(countedBy);
  expect(res.headers.get("idempotent-replayed"), `${context}\n(replayed a stored answer)`).toBeNull();

  if (outcome.kind === "deny") {
    expect({ status: res.status, code: body.code }, context).toEqual({ status: outcome.status, code: outcome.code });
    expect(body, context).toMatchObject({
      error: expect.any(String),
      code: outcome.code,
      meta: { timestamp: expect.any(String) },
    });
    expect(body.data, context).toBeUndefined();
    if (before !== null) expect(await snapshot(), `${context}\na refused write changed D1`).toBe(before);
    return;
  }

  expect(res.status, context).toBe(SUCCESS_STATUS[route.key] ?? (route.method === "POST" ? 201 : 200));
  expect(body.data, context).toBeDefined();
  if (route.public) return;
  // Nothing of the other tenant, ever.
  for (const id of other.ids) expect(text.includes(id), `${context}\nmentions ${id} of the other tenant`).toBe(false);
  // The caller sees its own data (so the check above is not vacuous).
  const subject = resolved.id ?? (request.includes ? fixtures[identity.tenant][request.includes] : undefined);
  if (route.template === "/v1/me") expect(body.data.user.id, context).toBe(caller.tenant.id);
  if (request.includes && subject)
    expect(text.includes(subject), `${context}\nmisses the caller's ${request.includes}`).toBe(true);
  if (route.method === "POST" && !route.template.startsWith("/v1/webhook-endpoints")) {
    expect(body.data.userId, context).toBe(caller.tenant.id);
  }
  if (route.method === "POST") caller.ids.add(body.data.id);
  if (route.method === "PATCH") expect(body.data.id, context).toBe(resolved.id);
  if (route.method === "DELETE") {
    expect(body.data, context).toEqual({ id: resolved.id, deleted: true });
    const table = route.template.startsWith("/v1/services")
      ? "services"
      : route.template.startsWith("/v1/webhook-endpoints")
        ? "webhook_endpoints"
        : "paywalls";
    expect(await env.DB.prepare(`SELECT id FROM ${table} WHERE id = ?`).bind(resolved.id).first(), context).toBeNull();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The tests

describe("the matrix is complete", () => {
  it("the conditional headers of the document are sent: If-Match on every PATCH and DELETE of one resource, If-None-Match on its GET and every list", () => {
    const conditional = Object.fromEntries(ROUTES.filter((r) => r.conditionals.length > 0).map((r) => [r.key, r.conditionals]));
    expect(conditional).toEqual({
      "GET /v1/services": ["if-none-match"],
      "GET /v1/paywalls": ["if-none-match"],
      "GET /v1/transactions": ["if-none-match"],
      "GET /v1/events": ["if-none-match"],
      "GET /v1/webhook-endpoints": ["if-none-match"],
      "GET /v1/webhook-endpoints/{id}/deliveries": ["if-none-match"],
      "GET /v1/services/{id}": ["if-none-match"],
      "GET /v1/services/{id}/discovery": ["if-none-match"],
      "GET /v1/transactions/{id}": ["if-none-match"],
      "GET /v1/channels": ["if-none-match"],
      "GET /v1/channels/{id}": ["if-none-match"],
      "GET /v1/events/{id}": ["if-none-match"],
      "GET /v1/webhook-endpoints/{id}": ["if-none-match"],
      "PATCH /v1/services/{id}": ["if-match"],
      "DELETE /v1/services/{id}": ["if-match"],
      "GET /v1/paywalls/{id}": ["if-none-match"],
      "PATCH /v1/paywalls/{id}": ["if-match"],
      "DELETE /v1/paywalls/{id}": ["if-match"],
    });
  });

  it("every write of the document takes an Idempotency-Key, and the matrix sends one", () => {
    const takesKey = (r: Route) =>
      (doc.paths[r.template]?.[r.method.toLowerCase()]?.parameters ?? []).some(
        (p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key",
      );
    const writes = ROUTES.filter((r) => r.method !== "GET");
    expect(writes.map((r) => r.key)).toHaveLength(12);
    expect(writes.filter((r) => !takesKey(r)).map((r) => r.key)).toEqual([]);
    expect(ROUTES.filter((r) => r.method === "GET" && takesKey(r)).map((r) => r.key)).toEqual([]);
  });

  it("every documented operation has a request, and every request a documented operation", () => {
    expect(missingRequests).toEqual([]);
    expect(Object.keys(REQUESTS).filter((key) => !routeByKey.has(key))).toEqual([]);
  });

  it("every id-bearing filter and body field of the document has a cross-tenant reference case", () => {
    const covered = new Set(REFERENCES.filter((r) => r.caller === "B" && r.field !== "id").map((r) => `${r.route} ${r.field}`));
    const declared = ROUTES.flatMap((r) => [...r.queryRefs, ...r.bodyRefs].map((field) => `${r.key} ${field}`));
    for (const field of declared)
      expect(REF_KINDS[field.split(" ").pop() as string], `no fixture kind for ${field}`).toBeDefined();
    expect(declared.filter((d) => !covered.has(d))).toEqual([]);
  });

  it("the scope table covers the application's scopes", () => {
    expect([...ALL_SCOPES].sort()).toEqual([...SCOPES].sort());
  });

  it("the documented scopes are the contract's (a consistent but wrong scope in code and document is caught here)", () => {
    const documented = Object.fromEntries(ROUTES.map((r) => [r.key, r.public ? "public" : r.scope]));
    expect(documented).toEqual({
      "GET /v1/health": "public",
      "GET /v1/me": null,
      "POST /v1/services": "services:write",
      "GET /v1/services": "services:read",
      "GET /v1/services/{id}": "services:read",
      "PATCH /v1/services/{id}": "services:write",
      "DELETE /v1/services/{id}": "services:write",
      "GET /v1/services/{id}/discovery": "services:read",
      "POST /v1/paywalls": "paywalls:write",
      "GET /v1/paywalls": "paywalls:read",
      "GET /v1/paywalls/{id}": "paywalls:read",
      "PATCH /v1/paywalls/{id}": "paywalls:write",
      "DELETE /v1/paywalls/{id}": "paywalls:write",
      "GET /v1/transactions": "transactions:read",
      "GET /v1/transactions/{id}": "transactions:read",
      "GET /v1/channels": "transactions:read",
      "GET /v1/channels/{id}": "transactions:read",
      "GET /v1/events": "events:read",
      "GET /v1/events/{id}": "events:read",
      "POST /v1/webhook-endpoints": "webhooks:write",
      "GET /v1/webhook-endpoints": "webhooks:read",
      "GET /v1/webhook-endpoints/{id}": "webhooks:read",
      "PATCH /v1/webhook-endpoints/{id}": "webhooks:write",
      "DELETE /v1/webhook-endpoints/{id}": "webhooks:write",
      "POST /v1/webhook-endpoints/{id}/secret/roll": "webhooks:write",
      "POST /v1/webhook-endpoints/{id}/test": "webhooks:write",
      "GET /v1/webhook-endpoints/{id}/deliveries": "webhooks:read",
      "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry": "webhooks:write",
    });
  });
});

describe("every operation × every identity", () => {
  it.each(MATRIX.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    await runCase(c);
  });
});

describe("references to another tenant's resources (and to none)", () => {
  it.each(REFERENCE_CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    await runCase(c);
  });
});
