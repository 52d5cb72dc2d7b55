/**
 * The operator commands behind `npm run admin` (docs/operations.md, "The operator CLI"): plain functions over a drizzle `Db`,
 * so the CLI (Node, through wrangler's platform proxy), `npm run dev` (the demo seed) and the tests (inside workerd)
 * run the same code. Nothing here may import `cloudflare:workers`.
 *
 * Every failure is an `ApiError` with its code: `VALIDATION_ERROR`, `NOT_FOUND`, `CONFLICT`, `KEY_LIMIT_REACHED`,
 * `ALREADY_REVOKED`. Dates go out as ISO strings. The raw key leaves this module once, from `createKey`.
 */
import { z } from "zod";
import { ApiError, invalid } from "../core/http/errors.ts";
import type { KeyStore } from "../core/keys/key-object.ts";
import {
  type CreatedKeyOutput,
  createKey,
  DEV_RUNNER,
  listKeys,
  parseInput as parse,
  removeKey,
} from "../core/keys/management.ts";
import { SCOPES } from "../core/keys/scopes.ts";
import type { Db } from "../db/client.ts";
import type { Tenant } from "../db/schema.ts";
import { findTenantById, hasAnyTenant, listTenants } from "../db/tenants.ts";

// The key commands are the shared key-management module's (the dashboard uses the same rules).
export {
  type CreatedKeyOutput,
  createKey,
  editKey,
  KeyCreateInput,
  type KeyOutput,
  keyOutput,
  listKeys,
  MAX_ALLOWED_IPS,
  pauseKey,
  removeKey,
  resumeKey,
  revokeKey,
} from "../core/keys/management.ts";

// The tenant rules are the shared tenants module's (the dashboard's sign-up uses the same ones).
import { createTenant, type TenantOutput, tenantOutput } from "../core/tenants.ts";

export { createTenant, TenantCreateInput, type TenantOutput, tenantOutput } from "../core/tenants.ts";

const Id = z.string().trim().min(1, "Required").max(100);

export async function listAllTenants(db: Db): Promise<TenantOutput[]> {
  return (await listTenants(db)).map(tenantOutput);
}

async function requireTenant(db: Db, id: string): Promise<Tenant> {
  const tenant = await findTenantById(db, id);
  if (!tenant) throw new ApiError("NOT_FOUND", `Tenant ${id} not found`);
  return tenant;
}

// ---------------------------------------------------------------------------------------------------------------
// Demo history (`demo-data`): a demo service with paywalls if the tenant has none, then buyer requests

export const DemoDataInput = z.strictObject({
  tenant: Id,
  count: z.coerce.number().int("Must be a whole number").min(1).max(10_000).default(200),
});
export type DemoDataInput = z.input<typeof DemoDataInput>;

/** Writes `count` demo buyer requests (events and transactions over the last week) for the tenant, through the ingestion code. */
export async function demoData(db: Db, input: DemoDataInput) {
  const v = parse(DemoDataInput, input);
  const tenant = await requireTenant(db, v.tenant);
  // Loaded on demand: the ingestion code pulls in the API's schemas, which the other commands do not need.
  const { writeDemoData } = await import("./demo-data.ts");
  return writeDemoData(db, tenant, v.count);
}

// ---------------------------------------------------------------------------------------------------------------
// Demo data for `npm run dev`

export const DEMO_TENANT = {
  email: "demo@example.com",
  name: "Demo tenant",
  wallet: "0x1111111111111111111111111111111111111111",
  tempoWallet: "0x2222222222222222222222222222222222222222",
} as const;

/**
 * On a database without any tenant: a demo tenant and a key with every scope. `null` when a tenant already
 * exists (including one created concurrently), so it never adds a second demo.
 */
export async function seedDemo(db: Db, now: Date = new Date()): Promise<{ tenant: TenantOutput; key: CreatedKeyOutput } | null> {
  if (await hasAnyTenant(db)) return null;
  let tenant: TenantOutput;
  try {
    tenant = await createTenant(db, DEMO_TENANT);
  } catch (err) {
    if (err instanceof ApiError && err.code === "CONFLICT") return null;
    throw err;
  }
  const key = await createKey(db, { tenant: tenant.id, name: "Demo key (all scopes)", scopes: [...SCOPES] }, now);
  return { tenant, key };
}

// ---------------------------------------------------------------------------------------------------------------
// The key `npm run dev -- --payments` sets up its demo paywall with (src/cli/localnet/dev-loop.ts)

/** Its name, as the tenant's keys and Activity show it. */
export const DEV_SETUP_KEY_NAME = "npm run dev -- --payments (demo setup, deleted at once)";
/** The name earlier versions gave it: a key left by an interrupted run of theirs goes too. */
const OLD_DEV_SETUP_KEY_NAME = "dev payment loop (temporary)";

/**
 * A key with `services:write` and `paywalls:write` for the dev runner's own setup calls, after deleting any left by an
 * interrupted run. Its events are the dev runner's (`dev-runner`, "npm run dev" on the Activity page), never the
 * operator's, so the tenant sees who made and deleted it; the service and paywall it creates are the API's events.
 */
export async function createDevSetupKey(store: KeyStore, tenant: string, now = new Date()): Promise<CreatedKeyOutput> {
  for (const old of await listKeys(store.db, { tenant })) {
    if (old.name === DEV_SETUP_KEY_NAME || old.name === OLD_DEV_SETUP_KEY_NAME) {
      await removeKey(store, { id: old.id }, now, DEV_RUNNER);
    }
  }
  const scopes = ["services:write", "paywalls:write"];
  return createKey(store.db, { tenant, name: DEV_SETUP_KEY_NAME, scopes }, now, DEV_RUNNER);
}

/** Deletes the dev runner's setup key, as the dev runner. */
export const removeDevSetupKey = (store: KeyStore, id: string, now = new Date()) => removeKey(store, { id }, now, DEV_RUNNER);

// ---------------------------------------------------------------------------------------------------------------
// Facilitators' health (`facilitators`): what the Worker's GET /v1/health reports

/**
 * Each configured facilitator's health, as the Worker at `baseUrl` reports it in `GET /v1/health`
 * (`checks.facilitators`): the health lives in the Worker's Durable Objects, which only the Worker reaches.
 */
export async function facilitatorsReport(fetcher: (input: string) => Promise<Response>, baseUrl: string): Promise<unknown> {
  const url = URL.parse("/v1/health", baseUrl);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw invalid([{ path: "baseUrl", message: "Must be an http(s) URL" }]);
  }
  let body: { data?: { checks?: { facilitators?: unknown } } } | undefined;
  try {
    const res = await fetcher(url.toString());
    body = (await res.json()) as typeof body;
  } catch {
    body = undefined;
  }
  const facilitators = body?.data?.checks?.facilitators;
  if (!Array.isArray(facilitators)) {
    throw new ApiError(
      "BAD_GATEWAY",
      `No Worker answered GET /v1/health at ${url.origin}: start it (npm run dev) or pass --base-url`,
    );
  }
  return facilitators;
}
