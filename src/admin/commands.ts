/**
 * The operator commands behind `npm run admin` (decisions.md, "Operator CLI"): plain functions over a drizzle `Db`,
 * so the CLI (Node, through wrangler's platform proxy), `npm run dev` (the demo seed) and the tests (inside workerd)
 * run the same code. Nothing here may import `cloudflare:workers`.
 *
 * Every failure is an `ApiError` with its code: `VALIDATION_ERROR`, `NOT_FOUND`, `CONFLICT`, `KEY_LIMIT_REACHED`,
 * `ALREADY_REVOKED`. Dates go out as ISO strings. The raw key leaves this module once, from `createKey`.
 */
import { z } from "zod";
import {
  deleteKey,
  findKeyById,
  insertKeyWithinLimit,
  listKeysOfTenant,
  MAX_ACTIVE_KEYS_PER_TENANT,
  revokeKeyIfNotRevoked,
  setKeyStatusUnlessRevoked,
} from "../db/api-keys.ts";
import type { Db } from "../db/client.ts";
import type { ApiKeyRow, KeyStatus, Tenant } from "../db/schema.ts";
import { findTenantById, hasAnyTenant, insertTenantIfEmailFree, listTenants } from "../db/tenants.ts";
import { ApiError } from "../errors.ts";
import { type EffectiveKeyStatus, effectiveKeyStatus, generateApiKey } from "../lib/api-key.ts";
import { newId } from "../lib/ids.ts";
import { normalizeAllowlist } from "../lib/ip-allowlist.ts";
import { parseScopes, SCOPES, type Scope } from "../lib/scopes.ts";

/** At most this many allowlist entries per key (every request checks them all). */
export const MAX_ALLOWED_IPS = 100;

// ---------------------------------------------------------------------------------------------------------------
// Input schemas

const Wallet = z
  .string()
  .trim()
  .regex(/^0x[a-fA-F0-9]{40}$/, "Must be an address: 0x followed by 40 hex characters");

/** Emails are compared case-insensitively: stored trimmed and lowercased, so the unique index catches `A@x` vs `a@x`. */
const Email = z.string().trim().toLowerCase().pipe(z.email("Must be an email address").max(320));

const Name = z.string().trim().min(1, "Must be 1-100 characters").max(100, "Must be 1-100 characters");

const Id = z.string().trim().min(1, "Required").max(100);

/** A list given as one comma-separated string (as on the command line) or as an array. */
const commaList = (value: string | string[]) =>
  (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);

const Scopes = z.union([z.string(), z.array(z.string())]).transform((value, ctx): Scope[] => {
  try {
    return parseScopes(commaList(value).join(","));
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
    return z.NEVER;
  }
});

const AllowIps = z.union([z.string(), z.array(z.string())]).transform((value, ctx): string[] => {
  const entries = commaList(value);
  if (entries.length > MAX_ALLOWED_IPS) {
    ctx.addIssue({ code: "custom", message: `At most ${MAX_ALLOWED_IPS} entries` });
    return z.NEVER;
  }
  try {
    return [...new Set(normalizeAllowlist(entries))];
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
    return z.NEVER;
  }
});

/** An ISO 8601 date-time with `Z` or an offset, e.g. `2027-01-31T00:00:00Z`; checked to be in the future separately. */
const ExpiresAt = z.iso
  .datetime({ offset: true, message: "Must be an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T00:00:00Z" })
  .transform((s) => new Date(s));

export const TenantCreateInput = z.strictObject({
  email: Email,
  name: Name,
  wallet: Wallet,
  tempoWallet: Wallet.nullish(),
});
export type TenantCreateInput = z.input<typeof TenantCreateInput>;

export const KeyCreateInput = z.strictObject({
  tenant: Id,
  name: Name,
  scopes: Scopes,
  expiresAt: ExpiresAt.nullish(),
  allowIps: AllowIps.optional(),
});
export type KeyCreateInput = z.input<typeof KeyCreateInput>;

const TenantRef = z.strictObject({ tenant: Id });
const KeyRef = z.strictObject({ id: Id });

/** Same shape as the API's validation details: one `{path, message}` per problem. */
function validationError(error: z.ZodError): ApiError {
  const details = error.issues.flatMap((issue) => {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: base ? `${base}.${key}` : key, message: "Unknown field" }));
    }
    return [{ path: base, message: issue.message }];
  });
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join("; ");
  return new ApiError("VALIDATION_ERROR", `Invalid input: ${summary}`, { details });
}

function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error);
  return result.data;
}

// ---------------------------------------------------------------------------------------------------------------
// Outputs

export interface TenantOutput {
  id: string;
  email: string;
  name: string;
  walletAddress: string;
  tempoWalletAddress: string | null;
  createdAt: string;
}

/** `key create`'s answer: the only place the raw `key` ever appears. */
export interface CreatedKeyOutput {
  id: string;
  key: string;
  keyPrefix: string;
  name: string;
  scopes: string[];
  status: KeyStatus;
  expiresAt: string | null;
  allowedIps: string[];
  createdAt: string;
}

/**
 * A key's metadata: never the raw key, never its hash. `status` is the effective state (an expired key reads
 * `expired`, whatever its stored state); `expired` is kept for readers of the earlier shape.
 */
export interface KeyOutput {
  id: string;
  tenantId: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  status: EffectiveKeyStatus;
  expired: boolean;
  expiresAt: string | null;
  allowedIps: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const tenantOutput = (t: Tenant): TenantOutput => ({
  id: t.id,
  email: t.email,
  name: t.name,
  walletAddress: t.walletAddress,
  tempoWalletAddress: t.tempoWalletAddress,
  createdAt: t.createdAt.toISOString(),
});

export const keyOutput = (k: ApiKeyRow, now: Date = new Date()): KeyOutput => ({
  id: k.id,
  tenantId: k.tenantId,
  name: k.name,
  keyPrefix: k.keyPrefix,
  scopes: k.scopes,
  status: effectiveKeyStatus(k, now),
  expired: k.expiresAt !== null && k.expiresAt.getTime() <= now.getTime(),
  expiresAt: iso(k.expiresAt),
  allowedIps: k.allowedIps,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: iso(k.lastUsedAt),
  revokedAt: iso(k.revokedAt),
});

// ---------------------------------------------------------------------------------------------------------------
// Tenants

export async function createTenant(db: Db, input: TenantCreateInput): Promise<TenantOutput> {
  const v = parse(TenantCreateInput, input);
  const tenant = await insertTenantIfEmailFree(db, {
    id: newId("ten"),
    email: v.email,
    name: v.name,
    walletAddress: v.wallet,
    tempoWalletAddress: v.tempoWallet ?? null,
  });
  if (!tenant) throw new ApiError("CONFLICT", `A tenant with the email ${v.email} already exists`);
  return tenantOutput(tenant);
}

export async function listAllTenants(db: Db): Promise<TenantOutput[]> {
  return (await listTenants(db)).map(tenantOutput);
}

// ---------------------------------------------------------------------------------------------------------------
// Keys

async function requireTenant(db: Db, id: string): Promise<Tenant> {
  const tenant = await findTenantById(db, id);
  if (!tenant) throw new ApiError("NOT_FOUND", `Tenant ${id} not found`);
  return tenant;
}

/**
 * Creates a key. The limit of 20 active keys per tenant is enforced by the insert itself (one conditional
 * statement), so concurrent creates cannot exceed it.
 */
export async function createKey(db: Db, input: KeyCreateInput, now: Date = new Date()): Promise<CreatedKeyOutput> {
  const v = parse(KeyCreateInput, input);
  if (v.expiresAt && v.expiresAt.getTime() <= now.getTime()) {
    throw new ApiError("VALIDATION_ERROR", "Invalid input: expiresAt: Must be in the future", {
      details: [{ path: "expiresAt", message: "Must be in the future" }],
    });
  }
  const { key, keyHash, keyPrefix } = await generateApiKey();
  const row = await insertKeyWithinLimit(
    db,
    {
      id: newId("key"),
      tenantId: v.tenant,
      name: v.name,
      keyHash,
      keyPrefix,
      scopes: v.scopes,
      status: "active",
      expiresAt: v.expiresAt ?? null,
      allowedIps: v.allowIps ?? [],
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    },
    now,
    MAX_ACTIVE_KEYS_PER_TENANT,
  );
  if (!row) {
    await requireTenant(db, v.tenant);
    throw new ApiError(
      "KEY_LIMIT_REACHED",
      `Tenant ${v.tenant} already holds ${MAX_ACTIVE_KEYS_PER_TENANT} active keys (paused keys count); revoke one first`,
    );
  }
  return {
    id: row.id,
    key,
    keyPrefix: row.keyPrefix,
    name: row.name,
    scopes: row.scopes,
    status: row.status,
    expiresAt: iso(row.expiresAt),
    allowedIps: row.allowedIps,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The tenant's keys, newest first: metadata only. */
export async function listKeys(db: Db, input: { tenant: string }, now: Date = new Date()): Promise<KeyOutput[]> {
  const { tenant } = parse(TenantRef, input);
  await requireTenant(db, tenant);
  return (await listKeysOfTenant(db, tenant)).map((k) => keyOutput(k, now));
}

/** After a conditional update changed nothing: the key is unknown, or revoked. */
async function refusal(db: Db, id: string, action: string): Promise<ApiError> {
  const key = await findKeyById(db, id);
  if (!key) return new ApiError("NOT_FOUND", `API key ${id} not found`);
  return new ApiError("ALREADY_REVOKED", `API key ${id} is revoked; a revoked key cannot be ${action}`);
}

/** Pauses a key (refused with `401 KEY_INACTIVE` from the next request on). Pausing a paused key is a no-op. */
export async function pauseKey(db: Db, input: { id: string }, now: Date = new Date()): Promise<KeyOutput> {
  const { id } = parse(KeyRef, input);
  const row = await setKeyStatusUnlessRevoked(db, id, "paused");
  if (!row) throw await refusal(db, id, "paused");
  return keyOutput(row, now);
}

/** Resumes a paused key. Resuming an active key is a no-op; a revoked key stays revoked. */
export async function resumeKey(db: Db, input: { id: string }, now: Date = new Date()): Promise<KeyOutput> {
  const { id } = parse(KeyRef, input);
  const row = await setKeyStatusUnlessRevoked(db, id, "active");
  if (!row) throw await refusal(db, id, "resumed");
  return keyOutput(row, now);
}

/** Revokes a key for good; revoking it again is `ALREADY_REVOKED`. */
export async function revokeKey(db: Db, input: { id: string }, now: Date = new Date()): Promise<KeyOutput> {
  const { id } = parse(KeyRef, input);
  const row = await revokeKeyIfNotRevoked(db, id, now);
  if (!row) {
    const err = await refusal(db, id, "revoked again");
    throw err.code === "ALREADY_REVOKED" ? new ApiError("ALREADY_REVOKED", `API key ${id} is already revoked`) : err;
  }
  return keyOutput(row, now);
}

/** Deletes a key row: the key then reads as unknown (`401 INVALID_API_KEY`). */
export async function removeKey(db: Db, input: { id: string }): Promise<{ id: string; deleted: true }> {
  const { id } = parse(KeyRef, input);
  if (!(await deleteKey(db, id))) throw new ApiError("NOT_FOUND", `API key ${id} not found`);
  return { id, deleted: true };
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
  const { writeDemoData } = await import("../ingest/demo-data.ts");
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
