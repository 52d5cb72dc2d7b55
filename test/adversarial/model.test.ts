// Model-based test of services, paywalls and keys (issue "adversarial test suite", part 4).
//
// Random sequences of commands (fc.commands) run against the real Worker (D1, Durable Objects) and an in-memory model:
// three tenants, four keys each (every scope; services:write; paywalls:write; read-only), with services and paywalls
// created, patched, deleted, listed page by page and read by id — including another tenant's resources, unknown ids,
// invalid input, slug conflicts within a service — and keys paused, resumed and revoked between steps through the operator
// commands (src/admin/commands.ts). After every step the API's answer must be the model's prediction (status and code;
// for reads the exact data: ids, order, fields, pagination), and the stored rows and key states must equal the model.
//
// Sizes: FUZZ_MODEL_RUNS runs (default 15) of up to FUZZ_MODEL_COMMANDS commands (default 30); see test/support/fuzz-env.ts.
// Prints one line, `model: N runs, M commands`.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { pauseKey, resumeKey, revokeKey } from "../../src/admin/commands.ts";
import { ApiError } from "../../src/core/http/errors.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { grants, type SpecScope } from "../fixtures/spec.ts";
import { read, send } from "../support/client.ts";
import { printToRunner } from "../support/console.ts";
import { createApiKey, createTenant, keys } from "../support/factories.ts";
import { envInt, fcParams } from "../support/fuzz-env.ts";

const RUNS = envInt("FUZZ_MODEL_RUNS", 15);
const MAX_COMMANDS = envInt("FUZZ_MODEL_COMMANDS", 30);
const TIMEOUT = 120_000 + RUNS * MAX_COMMANDS * 400;

// ---------------------------------------------------------------------------------------------------------------
// Contract facts (docs/api.md: networks, scopes, keys)

const NETWORKS = {
  testnet: ["arc-testnet", "base-sepolia", "hyperevm-testnet", "tempo-testnet"],
  mainnet: ["base", "hyperevm", "tempo"],
} as const;
type Mode = keyof typeof NETWORKS;
const otherMode = (mode: Mode): Mode => (mode === "testnet" ? "mainnet" : "testnet");
const SERVICES_CAP = 50;
const PAYWALLS_CAP = 500;

type Scope = SpecScope;
const hasScope = grants;

const KEY_PROFILES: { name: string; scopes: Scope[] }[] = [
  {
    name: "all",
    scopes: ["services:read", "services:write", "paywalls:read", "paywalls:write", "transactions:read", "events:read"],
  },
  { name: "services-write", scopes: ["services:write"] },
  { name: "paywalls-write", scopes: ["paywalls:write"] },
  { name: "read-only", scopes: ["services:read", "paywalls:read"] },
];
const TENANTS = 3;
/** Few slugs, one of them the seeded paywalls' own, so that slugs collide within a service. */
const SLUGS = ["seed", "alpha", "beta"] as const;
const UNKNOWN_ID = { service: "svc_000000000000000000000000", paywall: "pw_000000000000000000000000" };

// ---------------------------------------------------------------------------------------------------------------
// The model

type KeyState = "active" | "paused" | "revoked";

interface MKey {
  id: string;
  key: string;
  scopes: Scope[];
  state: KeyState;
}

interface MService {
  id: string;
  tenant: number;
  name: string;
  mode: Mode;
  networks: string[];
  createdAt: string;
}

interface MPaywall {
  id: string;
  tenant: number;
  serviceId: string | null;
  slug: string;
  name: string;
  targetType: "PROXY" | "ROUTE";
  price: string;
  enabled: boolean;
  networks: string[];
  createdAt: string;
}

interface Model {
  tenants: Tenant[];
  keys: MKey[][];
  services: MService[];
  paywalls: MPaywall[];
}

/** The real side is the Worker itself; commands reach it through the Worker's fetch handler (client.ts) and D1. */
type Real = Record<string, never>;

const newestFirst = <T extends { createdAt: string; id: string }>(a: T, b: T) =>
  a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;

const servicesOf = (m: Model, t: number) => m.services.filter((s) => s.tenant === t).sort(newestFirst);
const paywallsOf = (m: Model, t: number) => m.paywalls.filter((p) => p.tenant === t).sort(newestFirst);
const childrenOf = (m: Model, serviceId: string) => m.paywalls.filter((p) => p.serviceId === serviceId).sort(newestFirst);

interface Outcome {
  status: number;
  code?: string;
}

/** Key state, then scope (docs/api.md: key → state → IP → rate limit → scope → handler). `null` when the request gets through. */
function gate(m: Model, t: number, k: number, scope: Scope | null): Outcome | null {
  const key = m.keys[t]?.[k] as MKey;
  if (key.state === "revoked") return { status: 401, code: "KEY_REVOKED" };
  if (key.state === "paused") return { status: 401, code: "KEY_INACTIVE" };
  if (scope && !hasScope(key.scopes, scope)) return { status: 403, code: "INSUFFICIENT_SCOPE" };
  return null;
}

/** A reference to a resource, resolved against the model when the command runs. */
type RefKind = "own" | "other" | "unknown";
interface Ref {
  kind: RefKind;
  n: number;
}

function resolve<T extends { id: string; tenant: number }>(
  list: T[],
  t: number,
  ref: Ref,
  unknownId: string,
): { id: string; found?: T } {
  const candidates =
    ref.kind === "own" ? list.filter((x) => x.tenant === t) : ref.kind === "other" ? list.filter((x) => x.tenant !== t) : [];
  const found = candidates.length > 0 ? candidates[ref.n % candidates.length] : undefined;
  return found ? { id: found.id, found } : { id: unknownId };
}

/** 404 for an unknown id, 403 for another tenant's. */
const ownership = (found: { tenant: number } | undefined, t: number): Outcome | null =>
  !found ? { status: 404, code: "NOT_FOUND" } : found.tenant !== t ? { status: 403, code: "FORBIDDEN" } : null;

// ---------------------------------------------------------------------------------------------------------------
// Talking to the Worker

let commandCount = 0;
let runCount = 0;
/** `command status` → how often, to show what the runs exercised. */
const outcomes = new Map<string, number>();

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are compared field by field with the model
  body: any;
  text: string;
}

async function api(m: Model, t: number, k: number, method: string, path: string, body?: unknown): Promise<Answer> {
  const key = m.keys[t]?.[k] as MKey;
  const headers = new Headers({ authorization: `Bearer ${key.key}` });
  if (body !== undefined) headers.set("content-type", "application/json");
  return read(
    await send(
      new Request(`https://api.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
    ),
  );
}

function expectOutcome(what: string, ans: Answer, expected: Outcome): void {
  const tally = `${what.split("(")[0]} ${ans.status}${ans.status >= 400 ? ` ${ans.body?.code}` : ""}`;
  outcomes.set(tally, (outcomes.get(tally) ?? 0) + 1);
  const got = { status: ans.status, code: ans.status >= 400 ? ans.body?.code : undefined };
  expect(got, `${what} → ${ans.status} ${ans.text.slice(0, 400)}`).toEqual({ status: expected.status, code: expected.code });
  expect(ans.body?.meta?.requestId, what).toMatch(/^req_/);
}

const serviceView = (m: Model, s: MService) => ({
  id: s.id,
  name: s.name,
  mode: s.mode,
  networks: s.networks,
  Paywall: childrenOf(m, s.id).map((p) => p.id),
});
// biome-ignore lint/suspicious/noExplicitAny: API data
const apiServiceView = (s: any) => ({
  id: s.id,
  name: s.name,
  mode: s.mode,
  networks: s.networks,
  Paywall: s.Paywall.map((p: { id: string }) => p.id),
});
const paywallView = (p: MPaywall) => ({
  id: p.id,
  serviceId: p.serviceId,
  slug: p.slug,
  name: p.name,
  targetType: p.targetType,
  price: p.price,
  enabled: p.enabled,
  networks: p.networks,
});
// biome-ignore lint/suspicious/noExplicitAny: API data
const apiPaywallView = (p: any) => ({
  id: p.id,
  serviceId: p.serviceId,
  slug: p.slug,
  name: p.name,
  targetType: p.targetType,
  price: p.price,
  enabled: p.enabled,
  networks: p.networks,
});

/** After every step: the stored rows of the run's tenants and their keys' states are the model's. */
async function expectStorageMatches(m: Model): Promise<void> {
  const ids = m.tenants.map((t) => t.id);
  const marks = ids.map(() => "?").join(",");
  const [services, paywalls, keys] = await env.DB.batch([
    env.DB.prepare(`SELECT id, tenant_id, name, mode, networks FROM services WHERE tenant_id IN (${marks}) ORDER BY id`).bind(
      ...ids,
    ),
    env.DB.prepare(
      `SELECT id, tenant_id, service_id, slug, name, target_type, price, enabled, networks FROM paywalls WHERE tenant_id IN (${marks}) ORDER BY id`,
    ).bind(...ids),
    env.DB.prepare(`SELECT id, status FROM api_keys WHERE tenant_id IN (${marks}) ORDER BY id`).bind(...ids),
  ]);
  const byId = <T extends { id: string }>(list: T[]) => [...list].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(services?.results, "stored services").toEqual(
    byId(m.services).map((s) => ({
      id: s.id,
      tenant_id: m.tenants[s.tenant]?.id,
      name: s.name,
      mode: s.mode,
      networks: JSON.stringify(s.networks),
    })),
  );
  expect(paywalls?.results, "stored paywalls").toEqual(
    byId(m.paywalls).map((p) => ({
      id: p.id,
      tenant_id: m.tenants[p.tenant]?.id,
      service_id: p.serviceId,
      slug: p.slug,
      name: p.name,
      target_type: p.targetType,
      price: p.price,
      enabled: p.enabled ? 1 : 0,
      networks: JSON.stringify(p.networks),
    })),
  );
  expect(keys?.results, "stored key states").toEqual(byId(m.keys.flat()).map((k) => ({ id: k.id, status: k.state })));
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

/** One step: an action on the model and the Worker, then the storage check. */
class Step implements fc.AsyncCommand<Model, Real, false> {
  readonly label: string;
  readonly action: (m: Model) => Promise<void>;

  constructor(label: string, action: (m: Model) => Promise<void>) {
    this.label = label;
    this.action = action;
  }

  check(): boolean {
    return true;
  }

  async run(m: Model): Promise<void> {
    commandCount++;
    await this.action(m);
    await expectStorageMatches(m);
  }

  toString(): string {
    return this.label;
  }
}

const who = (t: number, k: number) => `tenant ${t} key ${KEY_PROFILES[k]?.name}`;
const refLabel = (ref: Ref | null) => (ref ? `${ref.kind}#${ref.n}` : "none");

type ServiceInvalid = "none" | "empty-name" | "foreign-network";

function createService(t: number, k: number, mode: Mode, pickNetworks: boolean[], name: string, invalid: ServiceInvalid): Step {
  const label = `createService(${who(t, k)}, ${mode}, ${JSON.stringify(name)}, ${invalid})`;
  return new Step(label, async (m) => {
    const chosen = NETWORKS[mode].filter((_, i) => pickNetworks[i]);
    const networks: string[] = chosen.length > 0 ? chosen : [NETWORKS[mode][0]];
    const body = {
      name: invalid === "empty-name" ? "" : name,
      baseUrl: "https://api.example.com",
      authMethod: "bearer",
      authConfig: { bearerToken: "model-secret" },
      networks: invalid === "foreign-network" ? [...networks, NETWORKS[otherMode(mode)][0]] : networks,
      mode,
    };
    const expected =
      gate(m, t, k, "services:write") ??
      (invalid !== "none"
        ? { status: 400, code: "VALIDATION_ERROR" }
        : servicesOf(m, t).length >= SERVICES_CAP
          ? { status: 403, code: "BETA_LIMIT_SERVICES" }
          : { status: 201 });
    const ans = await api(m, t, k, "POST", "/v1/services", body);
    expectOutcome(label, ans, expected);
    if (ans.status === 201) {
      const data = ans.body.data;
      expect({ name: data.name, mode: data.mode, networks: data.networks, Paywall: data.Paywall, userId: data.userId }).toEqual({
        name,
        mode,
        networks,
        Paywall: [],
        userId: m.tenants[t]?.id,
      });
      m.services.push({ id: data.id, tenant: t, name, mode, networks, createdAt: data.createdAt });
    }
  });
}

type ServiceChange = "name" | "networks" | "mode-and-networks" | "mode-only" | "too-long-name";

function patchService(t: number, k: number, ref: Ref, change: ServiceChange, value: string): Step {
  const label = `patchService(${who(t, k)}, ${refLabel(ref)}, ${change})`;
  return new Step(label, async (m) => {
    const { id, found } = resolve(m.services, t, ref, UNKNOWN_ID.service);
    const mode: Mode = found?.mode ?? "testnet";
    const flipped = otherMode(mode);
    const body: { name?: string; mode?: Mode; networks?: string[] } =
      change === "name"
        ? { name: value }
        : change === "too-long-name"
          ? { name: "x".repeat(101) }
          : change === "networks"
            ? { networks: [...NETWORKS[mode]].reverse().slice(0, 2) }
            : change === "mode-and-networks"
              ? { mode: flipped, networks: [NETWORKS[flipped][0]] }
              : { mode: flipped };
    let expected = gate(m, t, k, "services:write");
    if (!expected && change === "too-long-name") expected = { status: 400, code: "VALIDATION_ERROR" };
    expected ??= ownership(found, t);
    if (!expected && (change === "mode-only" || (change === "mode-and-networks" && childrenOf(m, id).length > 0))) {
      // networks of the old mode would stay, or existing paywalls accept only the old mode's networks
      expected = { status: 400, code: "VALIDATION_ERROR" };
    }
    expected ??= { status: 200 };
    const ans = await api(m, t, k, "PATCH", `/v1/services/${id}`, body);
    expectOutcome(label, ans, expected);
    if (ans.status === 200 && found) {
      if (body.name !== undefined) found.name = body.name;
      if (body.mode !== undefined) found.mode = body.mode;
      if (body.networks !== undefined) found.networks = body.networks;
      expect(apiServiceView(ans.body.data)).toEqual(serviceView(m, found));
    }
  });
}

function deleteService(t: number, k: number, ref: Ref): Step {
  const label = `deleteService(${who(t, k)}, ${refLabel(ref)})`;
  return new Step(label, async (m) => {
    const { id, found } = resolve(m.services, t, ref, UNKNOWN_ID.service);
    const expected = gate(m, t, k, "services:write") ?? ownership(found, t) ?? { status: 200 };
    const ans = await api(m, t, k, "DELETE", `/v1/services/${id}`);
    expectOutcome(label, ans, expected);
    if (ans.status === 200) {
      expect(ans.body.data).toEqual({ id, deleted: true });
      m.services = m.services.filter((s) => s.id !== id);
      m.paywalls = m.paywalls.filter((p) => p.serviceId !== id); // its paywalls go with it
    }
  });
}

/** `foreign-network`: networks of two modes; `other-mode`: networks of one mode, not the service's. */
type PaywallInvalid = "none" | "bad-price" | "foreign-network" | "other-mode";

function createPaywall(
  t: number,
  k: number,
  service: Ref | null,
  slug: string,
  targetType: "PROXY" | "ROUTE",
  enabled: boolean,
  price: number,
  invalid: PaywallInvalid,
): Step {
  const label = `createPaywall(${who(t, k)}, service ${refLabel(service)}, ${slug}, ${targetType}, ${invalid})`;
  return new Step(label, async (m) => {
    const svc = service ? resolve(m.services, t, service, UNKNOWN_ID.service) : undefined;
    const mode: Mode = svc?.found?.mode ?? (price % 2 ? "mainnet" : "testnet");
    const networks: string[] =
      invalid === "foreign-network"
        ? [NETWORKS[mode][0], NETWORKS[otherMode(mode)][0]]
        : invalid === "other-mode"
          ? [NETWORKS[otherMode(mode)][0]]
          : [NETWORKS[mode][price % NETWORKS[mode].length] as string];
    const body = {
      slug,
      name: `paywall ${slug}`,
      targetType,
      ...(targetType === "ROUTE" ? { targetRoute: "/paid" } : { targetUrl: "https://api.example.com/paid" }),
      ...(svc ? { serviceId: svc.id } : {}),
      price: invalid === "bad-price" ? "0" : String(price),
      currency: "USDC",
      networks,
      fulfillmentMode: "PROXY",
      enabled,
    };
    // Order of the checks: key and scope, the body's schema, the service, the cross-field rules, the slug, the cap.
    let expected = gate(m, t, k, "paywalls:write");
    if (!expected && invalid === "bad-price") expected = { status: 400, code: "VALIDATION_ERROR" };
    if (!expected && svc && (!svc.found || svc.found.tenant !== t)) expected = { status: 400, code: "INVALID_SERVICE" };
    if (!expected && (invalid === "foreign-network" || (invalid === "other-mode" && svc) || (targetType === "ROUTE" && !svc)))
      expected = { status: 400, code: "VALIDATION_ERROR" };
    if (!expected && svc && m.paywalls.some((p) => p.serviceId === svc.id && p.slug === slug))
      expected = { status: 409, code: "CONFLICT" };
    if (!expected && paywallsOf(m, t).length >= PAYWALLS_CAP) expected = { status: 403, code: "BETA_LIMIT_PAYWALLS" };
    expected ??= { status: 201 };
    const ans = await api(m, t, k, "POST", "/v1/paywalls", body);
    expectOutcome(label, ans, expected);
    if (ans.status === 201) {
      const created: MPaywall = {
        id: ans.body.data.id,
        tenant: t,
        serviceId: svc?.id ?? null,
        slug,
        name: body.name,
        targetType,
        price: body.price,
        enabled,
        networks,
        createdAt: ans.body.data.createdAt,
      };
      expect(apiPaywallView(ans.body.data)).toEqual(paywallView(created));
      m.paywalls.push(created);
    }
  });
}

type PaywallChange = "name" | "price" | "enabled" | "move" | "detach" | "foreign-service" | "bad-price";

function patchPaywall(t: number, k: number, ref: Ref, change: PaywallChange, n: number): Step {
  const label = `patchPaywall(${who(t, k)}, ${refLabel(ref)}, ${change}#${n})`;
  return new Step(label, async (m) => {
    const { id, found } = resolve(m.paywalls, t, ref, UNKNOWN_ID.paywall);
    const own = servicesOf(m, t);
    const foreign = m.services.filter((s) => s.tenant !== t);
    const body: { name?: string; price?: string; enabled?: boolean; serviceId?: string | null } =
      change === "name"
        ? { name: `renamed ${n}` }
        : change === "price"
          ? { price: String(1 + n) }
          : change === "enabled"
            ? { enabled: n % 2 === 0 }
            : change === "move"
              ? { serviceId: own[n % Math.max(1, own.length)]?.id ?? UNKNOWN_ID.service }
              : change === "detach"
                ? { serviceId: null }
                : change === "foreign-service"
                  ? { serviceId: foreign[n % Math.max(1, foreign.length)]?.id ?? UNKNOWN_ID.service }
                  : { price: "01" };
    let expected = gate(m, t, k, "paywalls:write");
    if (!expected && change === "bad-price") expected = { status: 400, code: "VALIDATION_ERROR" };
    expected ??= ownership(found, t);
    if (!expected && found) {
      // The paywall as it would be stored is validated as a whole.
      const serviceId = body.serviceId !== undefined ? body.serviceId : found.serviceId;
      const service = serviceId ? m.services.find((s) => s.id === serviceId) : undefined;
      const modeNetworks: readonly string[] = service ? NETWORKS[service.mode] : [];
      if (serviceId && (!service || service.tenant !== t)) expected = { status: 400, code: "INVALID_SERVICE" };
      else if (found.targetType === "ROUTE" && !serviceId) expected = { status: 400, code: "VALIDATION_ERROR" };
      else if (service && found.networks.some((network) => !modeNetworks.includes(network)))
        expected = { status: 400, code: "VALIDATION_ERROR" };
      else if (serviceId && m.paywalls.some((p) => p.id !== found.id && p.serviceId === serviceId && p.slug === found.slug)) {
        expected = { status: 409, code: "CONFLICT" };
      }
    }
    expected ??= { status: 200 };
    const ans = await api(m, t, k, "PATCH", `/v1/paywalls/${id}`, body);
    expectOutcome(label, ans, expected);
    if (ans.status === 200 && found) {
      if (body.name !== undefined) found.name = body.name;
      if (body.price !== undefined) found.price = body.price;
      if (body.enabled !== undefined) found.enabled = body.enabled;
      if (body.serviceId !== undefined) found.serviceId = body.serviceId;
      expect(apiPaywallView(ans.body.data)).toEqual(paywallView(found));
    }
  });
}

function deletePaywall(t: number, k: number, ref: Ref): Step {
  const label = `deletePaywall(${who(t, k)}, ${refLabel(ref)})`;
  return new Step(label, async (m) => {
    const { id, found } = resolve(m.paywalls, t, ref, UNKNOWN_ID.paywall);
    const expected = gate(m, t, k, "paywalls:write") ?? ownership(found, t) ?? { status: 200 };
    const ans = await api(m, t, k, "DELETE", `/v1/paywalls/${id}`);
    expectOutcome(label, ans, expected);
    if (ans.status === 200) {
      expect(ans.body.data).toEqual({ id, deleted: true });
      m.paywalls = m.paywalls.filter((p) => p.id !== id);
    }
  });
}

/** The expected page: `pagination` and the slice of `all`. */
function expectPage<T>(
  ans: Answer,
  all: T[],
  limit: number,
  offset: number,
  view: (x: T) => unknown,
  apiView: (x: unknown) => unknown,
) {
  expect(ans.body.meta.pagination, "pagination").toEqual({
    total: all.length,
    limit,
    offset,
    hasMore: offset + limit < all.length,
  });
  expect(ans.body.data.map(apiView), "page").toEqual(all.slice(offset, offset + limit).map(view));
}

function listServices(t: number, k: number, limit: number, offset: number, mode: Mode | null): Step {
  const label = `listServices(${who(t, k)}, limit ${limit}, offset ${offset}, mode ${mode})`;
  return new Step(label, async (m) => {
    const expected = gate(m, t, k, "services:read") ?? { status: 200 };
    const ans = await api(m, t, k, "GET", `/v1/services?limit=${limit}&offset=${offset}${mode ? `&mode=${mode}` : ""}`);
    expectOutcome(label, ans, expected);
    if (ans.status === 200) {
      const all = servicesOf(m, t).filter((s) => !mode || s.mode === mode);
      expectPage(ans, all, limit, offset, (s) => serviceView(m, s), apiServiceView);
    }
  });
}

function listPaywalls(t: number, k: number, limit: number, offset: number, service: Ref | null, enabled: boolean | null): Step {
  const label = `listPaywalls(${who(t, k)}, limit ${limit}, offset ${offset}, service ${refLabel(service)}, enabled ${enabled})`;
  return new Step(label, async (m) => {
    const svc = service ? resolve(m.services, t, service, UNKNOWN_ID.service) : undefined;
    const expected = gate(m, t, k, "paywalls:read") ?? (svc ? ownership(svc.found, t) : null) ?? { status: 200 };
    const query = `?limit=${limit}&offset=${offset}${svc ? `&serviceId=${svc.id}` : ""}${enabled === null ? "" : `&enabled=${enabled}`}`;
    const ans = await api(m, t, k, "GET", `/v1/paywalls${query}`);
    expectOutcome(label, ans, expected);
    if (ans.status === 200) {
      const all = paywallsOf(m, t).filter((p) => (!svc || p.serviceId === svc.id) && (enabled === null || p.enabled === enabled));
      expectPage(ans, all, limit, offset, paywallView, apiPaywallView);
    }
  });
}

function getOne(t: number, k: number, what: "service" | "paywall", ref: Ref): Step {
  const label = `get${what === "service" ? "Service" : "Paywall"}(${who(t, k)}, ${refLabel(ref)})`;
  return new Step(label, async (m) => {
    const list: { id: string; tenant: number }[] = what === "service" ? m.services : m.paywalls;
    const { id, found } = resolve(list, t, ref, UNKNOWN_ID[what]);
    const expected = gate(m, t, k, what === "service" ? "services:read" : "paywalls:read") ??
      ownership(found, t) ?? { status: 200 };
    const ans = await api(m, t, k, "GET", `/v1/${what}s/${id}`);
    expectOutcome(label, ans, expected);
    if (ans.status === 200) {
      if (what === "service") expect(apiServiceView(ans.body.data)).toEqual(serviceView(m, found as MService));
      else expect(apiPaywallView(ans.body.data)).toEqual(paywallView(found as MPaywall));
    }
  });
}

/** Pause, resume or revoke a key between steps, with the operator commands; a revoked key stays revoked. */
function keyCommand(t: number, k: number, action: "pause" | "resume" | "revoke"): Step {
  const label = `${action}Key(${who(t, k)})`;
  return new Step(label, async (m) => {
    const key = m.keys[t]?.[k] as MKey;
    const command = { pause: pauseKey, resume: resumeKey, revoke: revokeKey }[action];
    let error: unknown;
    let result: { status: string } | undefined;
    try {
      result = await command(keys(), { id: key.id });
    } catch (err) {
      error = err;
    }
    if (key.state === "revoked") {
      expect(error instanceof ApiError ? error.code : error, label).toBe("ALREADY_REVOKED");
      return;
    }
    expect(error, label).toBeUndefined();
    key.state = action === "pause" ? "paused" : action === "resume" ? "active" : "revoked";
    expect(result?.status).toBe(key.state);
    // Takes effect on the very next request (docs/api.md: no cache may serve a stale key state).
    const ans = await api(m, t, k, "GET", "/v1/me");
    expectOutcome(`${label} then GET /v1/me`, ans, gate(m, t, k, null) ?? { status: 200 });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries

/** Tenant 0 acts most, so that its state grows; the others are there to be reached across tenants (and act too). */
const tenantArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.constant(1) },
  { weight: 1, arbitrary: fc.constant(2) },
);
/** Mostly the key with every scope, so that most steps reach the handlers. */
const keyArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: KEY_PROFILES.length - 1 }) },
);
const refArb: fc.Arbitrary<Ref> = fc.record({
  kind: fc.oneof(
    { weight: 6, arbitrary: fc.constant<RefKind>("own") },
    { weight: 2, arbitrary: fc.constant<RefKind>("other") },
    { weight: 1, arbitrary: fc.constant<RefKind>("unknown") },
  ),
  n: fc.nat({ max: 1000 }),
});
const modeArb = fc.constantFrom<Mode>("testnet", "mainnet");
const rare = <T>(normal: T, ...others: T[]) =>
  fc.oneof({ weight: 8, arbitrary: fc.constant(normal) }, ...others.map((o) => ({ weight: 1, arbitrary: fc.constant(o) })));

const createServiceArb = fc
  .tuple(
    tenantArb,
    keyArb,
    modeArb,
    fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    fc.string({ minLength: 1, maxLength: 30 }),
    rare("none" as const, "empty-name" as const, "foreign-network" as const),
  )
  .map(([t, k, mode, pick, name, invalid]) => createService(t, k, mode, pick, name, invalid));
const createPaywallArb = fc
  .tuple(
    tenantArb,
    keyArb,
    fc.option(refArb, { freq: 4, nil: null }),
    fc.constantFrom(...SLUGS),
    fc.constantFrom("PROXY" as const, "ROUTE" as const),
    fc.boolean(),
    fc.integer({ min: 1, max: 1_000_000 }),
    rare("none" as const, "bad-price" as const, "foreign-network" as const, "other-mode" as const),
  )
  .map(([t, k, service, slug, type, enabled, price, invalid]) =>
    createPaywall(t, k, service, slug, type, enabled, price, invalid),
  );

const patchPaywallArb = fc
  .tuple(
    tenantArb,
    keyArb,
    refArb,
    fc.constantFrom("name", "price", "enabled", "move", "detach", "foreign-service", "bad-price") as fc.Arbitrary<PaywallChange>,
    fc.nat({ max: 1000 }),
  )
  .map(([t, k, ref, change, n]) => patchPaywall(t, k, ref, change, n));

/** fc.commands picks among the arbitraries uniformly: paywall creations and patches are listed twice, so that state builds up. */
const commandArbs = [
  createServiceArb,
  createPaywallArb,
  createPaywallArb,
  fc
    .tuple(
      tenantArb,
      keyArb,
      refArb,
      fc.constantFrom("name", "networks", "mode-and-networks", "mode-only", "too-long-name") as fc.Arbitrary<ServiceChange>,
      fc.string({ minLength: 1, maxLength: 20 }),
    )
    .map(([t, k, ref, change, value]) => patchService(t, k, ref, change, value)),
  fc.tuple(tenantArb, keyArb, refArb).map(([t, k, ref]) => deleteService(t, k, ref)),
  patchPaywallArb,
  patchPaywallArb,
  fc.tuple(tenantArb, keyArb, refArb).map(([t, k, ref]) => deletePaywall(t, k, ref)),
  fc
    .tuple(tenantArb, keyArb, fc.integer({ min: 1, max: 4 }), fc.nat({ max: 6 }), fc.option(modeArb, { nil: null }))
    .map(([t, k, limit, offset, mode]) => listServices(t, k, limit, offset, mode)),
  fc
    .tuple(
      tenantArb,
      keyArb,
      fc.integer({ min: 1, max: 4 }),
      fc.nat({ max: 6 }),
      fc.option(refArb, { freq: 2, nil: null }),
      fc.option(fc.boolean(), { nil: null }),
    )
    .map(([t, k, limit, offset, service, enabled]) => listPaywalls(t, k, limit, offset, service, enabled)),
  fc
    .tuple(tenantArb, keyArb, fc.constantFrom("service" as const, "paywall" as const), refArb)
    .map(([t, k, what, ref]) => getOne(t, k, what, ref)),
  // Key actions on any of the tenant's keys; rarer than resource steps so that runs keep working keys.
  fc
    .tuple(
      tenantArb,
      fc.nat({ max: KEY_PROFILES.length - 1 }),
      fc.constantFrom("pause" as const, "pause" as const, "resume" as const, "resume" as const, "revoke" as const),
    )
    .map(([t, k, action]) => keyCommand(t, k, action)),
];

/**
 * Three fresh tenants with a key of each profile, and for each a testnet and a mainnet service, a ROUTE paywall on the
 * testnet one and a PROXY paywall without service (created through the API, so the model starts from what the API
 * answered): a clean world for every run and every shrink attempt.
 */
async function setup(): Promise<{ model: Model; real: Real }> {
  runCount++;
  const tenants = await Promise.all(Array.from({ length: TENANTS }, () => createTenant()));
  const keys = await Promise.all(
    tenants.map((tenant) =>
      Promise.all(
        KEY_PROFILES.map(async (profile) => {
          const { key, row } = await createApiKey({ tenant, scopes: profile.scopes, name: profile.name });
          return { id: row.id, key, scopes: profile.scopes, state: "active" as KeyState };
        }),
      ),
    ),
  );
  const model: Model = { tenants, keys, services: [], paywalls: [] };
  for (let t = 0; t < TENANTS; t++) {
    for (const mode of ["testnet", "mainnet"] as const) {
      const body = {
        name: `seed ${mode}`,
        baseUrl: "https://api.example.com",
        authMethod: "none",
        networks: [...NETWORKS[mode]],
        mode,
      };
      const ans = await api(model, t, 0, "POST", "/v1/services", body);
      expect(ans.status, ans.text).toBe(201);
      model.services.push({
        id: ans.body.data.id,
        tenant: t,
        name: body.name,
        mode,
        networks: body.networks,
        createdAt: ans.body.data.createdAt,
      });
    }
    const [testnet] = model.services.filter((s) => s.tenant === t);
    for (const serviceId of [testnet?.id ?? null, null]) {
      const body = {
        slug: "seed",
        name: "seed",
        targetType: serviceId ? "ROUTE" : "PROXY",
        ...(serviceId ? { targetRoute: "/seed", serviceId } : { targetUrl: "https://api.example.com/seed" }),
        price: "1000",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
      };
      const ans = await api(model, t, 0, "POST", "/v1/paywalls", body);
      expect(ans.status, ans.text).toBe(201);
      const data = ans.body.data;
      model.paywalls.push({
        id: data.id,
        tenant: t,
        serviceId,
        slug: "seed",
        name: "seed",
        targetType: data.targetType,
        price: "1000",
        enabled: true,
        networks: ["base-sepolia"],
        createdAt: data.createdAt,
      });
    }
  }
  return { model, real: {} };
}

// ---------------------------------------------------------------------------------------------------------------

describe("model-based: services, paywalls and keys across three tenants", () => {
  afterAll(() => {
    const seen = [...outcomes].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}: ${n}`);
    printToRunner(`model: ${runCount} runs, ${commandCount} commands (${seen.join(", ")})`);
  });

  it(
    "every step answers what the model predicts, and storage equals the model after each",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands(commandArbs, { maxCommands: MAX_COMMANDS, size: "max" }), (cmds) =>
          fc.asyncModelRun(setup, cmds),
        ),
        fcParams(RUNS),
      );
    },
    TIMEOUT,
  );
});
