/**
 * Key management: the one set of rules for API keys, used by the dashboard and by the operator CLI
 * (`npm run admin -- key …`). Create (scopes, optional expiry, optional IP allowlist; at most 20 active keys),
 * pause, resume, edit (name, scopes, expiry, allowlist), revoke (once: `ALREADY_REVOKED` after), delete.
 *
 * Every change is one `db.batch`: the conditional statement that makes it, and the key event that records it
 * (action, actor, IP, time), written only if the change happened. Once it has committed, the key's Durable Object is
 * told (`KeyStore.cache`, key-object.ts) before the function returns, so the change holds from the next request on:
 * the object authenticates every request from a record it read from D1. A caller acting for one tenant (the
 * dashboard) passes `tenant`: another tenant's key is then `FORBIDDEN`, never touched. Plain functions over a drizzle
 * `Db` and a `KeyCache`, so the CLI (Node), `npm run dev` and the Worker run the same code; nothing here imports
 * `cloudflare:workers`.
 *
 * Every failure is an `ApiError` with its code. Dates go out as ISO strings. The raw key leaves this module once,
 * from `createKey`.
 */
import { eq } from "drizzle-orm";
import { z } from "zod";
import {
  deleteKeyQuery,
  editKeyQuery,
  findKeyById,
  insertKeyWithinLimitQuery,
  listKeysOfTenant,
  MAX_ACTIVE_KEYS_PER_TENANT,
  revokeKeyIfNotRevokedQuery,
  rollOldKeyQuery,
  setKeyStatusUnlessRevokedQuery,
} from "../../db/api-keys.ts";
import type { Db } from "../../db/client.ts";
import { keyEventFromKey, previousStatementChanged } from "../../db/key-events.ts";
import { type ApiKeyRow, apiKeys, type KeyEventActor, type KeyStatus } from "../../db/schema.ts";
import { findTenantById } from "../../db/tenants.ts";
import { newId } from "../../lib/ids.ts";
import { normalizeAllowlist } from "../../lib/ip-allowlist.ts";
import { formatIssues, type Issue, issuesOf } from "../../lib/issues.ts";
import { textProblem } from "../../lib/text-rules.ts";
import { ApiError, invalid } from "../http/errors.ts";
import { type EffectiveKeyStatus, effectiveKeyStatus, generateApiKey } from "./api-key.ts";
import type { KeyStore } from "./key-object.ts";
import { parseScopes, type Scope } from "./scopes.ts";

export { MAX_ACTIVE_KEYS_PER_TENANT };

/** At most this many allowlist entries per key (every request checks them all). */
export const MAX_ALLOWED_IPS = 100;

/** Who makes a change, for the key's audit trail. */
export interface Actor {
  actor: KeyEventActor;
  ip: string | null;
}
export const OPERATOR_CLI: Actor = { actor: "operator-cli", ip: null };
export const DEV_RUNNER: Actor = { actor: "dev-runner", ip: null };

// ---------------------------------------------------------------------------------------------------------------
// Input schemas

/** A key's or tenant's name: one line of text we show (see text-rules.ts: no controls, separators or bidi controls). */
export const Name = z
  .string()
  .trim()
  .min(1, "Must be 1-100 characters")
  .max(100, "Must be 1-100 characters")
  .superRefine((value, ctx) => {
    const problem = textProblem(value, "single-line");
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
const Id = z.string().trim().min(1, "Required").max(100);

/** A list given as one comma- or newline-separated string (as on the command line or in a form) or as an array. */
const commaList = (value: string | string[]) =>
  (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(/[,\n]/))
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
  // Every bad entry is named, each with its own issue (a form shows them all at once).
  const normalized: string[] = [];
  for (const entry of entries) {
    try {
      normalized.push(...normalizeAllowlist([entry]));
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
    }
  }
  return normalized.length === entries.length ? [...new Set(normalized)] : z.NEVER;
});

/** An ISO 8601 date-time with `Z` or an offset, e.g. `2027-01-31T00:00:00Z`; checked to be in the future separately. */
const ExpiresAt = z.iso
  .datetime({ offset: true, message: "Must be an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T00:00:00Z" })
  .transform((s) => new Date(s));

export const KeyCreateInput = z.strictObject({
  tenant: Id,
  name: Name,
  scopes: Scopes,
  expiresAt: ExpiresAt.nullish(),
  allowIps: AllowIps.optional(),
});
export type KeyCreateInput = z.input<typeof KeyCreateInput>;

/** An edit replaces all four fields (the dashboard's edit form sends them all); `expiresAt: null` removes the expiry. */
export const KeyEditInput = z.strictObject({
  id: Id,
  tenant: Id,
  name: Name,
  scopes: Scopes,
  expiresAt: ExpiresAt.nullable(),
  allowIps: AllowIps,
});
export type KeyEditInput = z.input<typeof KeyEditInput>;

/** A key by id; with `tenant`, only that tenant's key. */
const KeyRef = z.strictObject({ id: Id, tenant: Id.optional() });
export type KeyRef = z.input<typeof KeyRef>;
const TenantRef = z.strictObject({ tenant: Id });

/** The API's validation vocabulary, with the issues summed up in the message. */
function validationError(issues: Issue[]): ApiError {
  return invalid(issues, `Invalid input: ${formatIssues(issues)}`);
}

/** Parses input with a schema; a failure is `VALIDATION_ERROR` with one `{path, message}` per problem. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(issuesOf(result.error));
  return result.data;
}

function requireFuture(expiresAt: Date | null | undefined, now: Date): void {
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    throw validationError([{ path: "expiresAt", message: "Must be in the future" }]);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Outputs

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

/** A key just made, with its raw value: the only answer that ever carries it. */
const createdKeyOutput = (row: ApiKeyRow, key: string): CreatedKeyOutput => ({
  id: row.id,
  key,
  keyPrefix: row.keyPrefix,
  name: row.name,
  scopes: row.scopes,
  status: row.status,
  expiresAt: iso(row.expiresAt),
  allowedIps: row.allowedIps,
  createdAt: row.createdAt.toISOString(),
});

// ---------------------------------------------------------------------------------------------------------------
// Commands

async function requireTenant(db: Db, id: string): Promise<void> {
  if (!(await findTenantById(db, id))) throw new ApiError("NOT_FOUND", `Tenant ${id} not found`);
}

const limitReached = (tenant: string) =>
  new ApiError(
    "KEY_LIMIT_REACHED",
    `Tenant ${tenant} already holds ${MAX_ACTIVE_KEYS_PER_TENANT} active keys (paused keys count); revoke one first`,
  );

/**
 * Creates a key. The limit of 20 active keys per tenant is enforced by the insert itself (one conditional
 * statement), so concurrent creates cannot exceed it.
 */
export async function createKey(
  db: Db,
  input: KeyCreateInput,
  now: Date = new Date(),
  by: Actor = OPERATOR_CLI,
): Promise<CreatedKeyOutput> {
  const v = parseInput(KeyCreateInput, input);
  requireFuture(v.expiresAt, now);
  const { key, keyHash, keyPrefix } = await generateApiKey();
  const id = newId("key");
  const [[row]] = await db.batch([
    insertKeyWithinLimitQuery(
      db,
      {
        id,
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
    ),
    keyEventFromKey(db, id, { action: "created", ...by, at: now }),
  ]);
  if (!row) {
    await requireTenant(db, v.tenant);
    throw limitReached(v.tenant);
  }
  return createdKeyOutput(row, key);
}

/** The tenant's keys, newest first: metadata only. */
export async function listKeys(db: Db, input: { tenant: string }, now: Date = new Date()): Promise<KeyOutput[]> {
  const { tenant } = parseInput(TenantRef, input);
  await requireTenant(db, tenant);
  return (await listKeysOfTenant(db, tenant)).map((k) => keyOutput(k, now));
}

/** After a conditional statement changed nothing: the key is unknown, another tenant's, or revoked. */
async function refusal(db: Db, ref: { id: string; tenant?: string | undefined }, action: string): Promise<ApiError> {
  const key = await findKeyById(db, ref.id);
  if (!key) return new ApiError("NOT_FOUND", `API key ${ref.id} not found`);
  if (ref.tenant !== undefined && key.tenantId !== ref.tenant) {
    return new ApiError("FORBIDDEN", "This API key belongs to another tenant");
  }
  return new ApiError("ALREADY_REVOKED", `API key ${ref.id} is revoked; a revoked key cannot be ${action}`);
}

async function setStatus(store: KeyStore, input: KeyRef, status: "active" | "paused", now: Date, by: Actor): Promise<KeyOutput> {
  const { db } = store;
  const ref = parseInput(KeyRef, input);
  const [[row]] = await db.batch([
    setKeyStatusUnlessRevokedQuery(db, ref.id, ref.tenant, status),
    keyEventFromKey(db, ref.id, { action: status === "paused" ? "paused" : "resumed", ...by, at: now }, previousStatementChanged),
  ]);
  if (!row) throw await refusal(db, ref, status === "paused" ? "paused" : "resumed");
  await store.cache.forget([row.keyHash]);
  return keyOutput(row, now);
}

/** Pauses a key (refused with `401 KEY_INACTIVE` from the next request on). Pausing a paused key is a no-op. */
export const pauseKey = (store: KeyStore, input: KeyRef, now: Date = new Date(), by: Actor = OPERATOR_CLI) =>
  setStatus(store, input, "paused", now, by);

/** Resumes a paused key. Resuming an active key is a no-op; a revoked key stays revoked. */
export const resumeKey = (store: KeyStore, input: KeyRef, now: Date = new Date(), by: Actor = OPERATOR_CLI) =>
  setStatus(store, input, "active", now, by);

/** Revokes a key for good (refused from the next request on); revoking it again is `ALREADY_REVOKED`. */
export async function revokeKey(
  store: KeyStore,
  input: KeyRef,
  now: Date = new Date(),
  by: Actor = OPERATOR_CLI,
): Promise<KeyOutput> {
  const { db } = store;
  const ref = parseInput(KeyRef, input);
  const [[row]] = await db.batch([
    revokeKeyIfNotRevokedQuery(db, ref.id, ref.tenant, now),
    keyEventFromKey(db, ref.id, { action: "revoked", ...by, at: now }, previousStatementChanged),
  ]);
  if (!row) {
    const err = await refusal(db, ref, "revoked again");
    throw err.code === "ALREADY_REVOKED" ? new ApiError("ALREADY_REVOKED", `API key ${ref.id} is already revoked`) : err;
  }
  await store.cache.forget([row.keyHash]);
  return keyOutput(row, now);
}

/** Edits a key's name, scopes, expiry and allowlist (not a revoked key). Takes effect on the next request. */
export async function editKey(
  store: KeyStore,
  input: KeyEditInput,
  now: Date = new Date(),
  by: Actor = OPERATOR_CLI,
): Promise<KeyOutput> {
  const { db } = store;
  const v = parseInput(KeyEditInput, input);
  requireFuture(v.expiresAt, now);
  const edit = { name: v.name, scopes: v.scopes, expiresAt: v.expiresAt, allowedIps: v.allowIps };
  const [[row]] = await db.batch([
    editKeyQuery(db, v.id, v.tenant, edit, now, MAX_ACTIVE_KEYS_PER_TENANT),
    keyEventFromKey(db, v.id, { action: "edited", ...by, at: now }, previousStatementChanged),
  ]);
  if (row) {
    await store.cache.forget([row.keyHash]);
    return keyOutput(row, now);
  }
  const key = await findKeyById(db, v.id);
  if (key && key.tenantId === v.tenant && key.status !== "revoked") throw limitReached(v.tenant);
  throw await refusal(db, v, "edited");
}

/** How long a rolled key keeps working: at most 30 days (0 = it stops at once). */
export const MAX_ROLL_GRACE_SECONDS = 30 * 24 * 60 * 60;

const KeyRollInput = z.strictObject({
  id: Id,
  tenant: Id.optional(),
  graceSeconds: z.coerce
    .number()
    .int("Must be a whole number of seconds")
    .min(0, "Must not be negative")
    .max(MAX_ROLL_GRACE_SECONDS, "Must be at most 30 days"),
});
export type KeyRollInput = z.input<typeof KeyRollInput>;

/**
 * Rolls a key (as Stripe does): a new key with the same name, permissions and allowlist now, and the old one expiring
 * after `graceSeconds` (revoked at once when 0), so the new key can be deployed before the old one stops. One batch:
 * the new key is inserted within the 20-key limit (the old one still counts until it expires), the old one's expiry
 * moves earlier only if that insert happened and the old key is not revoked, and both are recorded.
 */
export async function rollKey(store: KeyStore, input: KeyRollInput, now: Date = new Date(), by: Actor = OPERATOR_CLI) {
  const { db } = store;
  const v = parseInput(KeyRollInput, input);
  const old = await findKeyById(db, v.id);
  if (!old || (v.tenant !== undefined && old.tenantId !== v.tenant) || old.status === "revoked") {
    throw await refusal(db, { id: v.id, tenant: v.tenant }, "rolled");
  }
  const tenant = old.tenantId;
  const graceEnds = new Date(now.getTime() + v.graceSeconds * 1000);
  // The old key never lives longer than it would have.
  const oldExpiry = old.expiresAt && old.expiresAt < graceEnds ? old.expiresAt : graceEnds;
  const { key, keyHash, keyPrefix } = await generateApiKey();
  const id = newId("key");
  const [[row], , [rolled]] = await db.batch([
    insertKeyWithinLimitQuery(
      db,
      {
        id,
        tenantId: tenant,
        name: old.name,
        keyHash,
        keyPrefix,
        scopes: old.scopes,
        status: "active",
        expiresAt: old.expiresAt && old.expiresAt > now ? old.expiresAt : null,
        allowedIps: old.allowedIps,
        createdAt: now,
        lastUsedAt: null,
        revokedAt: null,
      },
      now,
      MAX_ACTIVE_KEYS_PER_TENANT,
    ),
    keyEventFromKey(db, id, { action: "created", ...by, at: now }),
    rollOldKeyQuery(db, old.id, id, v.graceSeconds === 0 ? { revokeAt: now } : { expireAt: oldExpiry }),
    keyEventFromKey(db, old.id, { action: "rolled", ...by, at: now }, previousStatementChanged),
  ]);
  if (!row) throw limitReached(tenant);
  if (!rolled) throw await refusal(db, { id: v.id, tenant: v.tenant }, "rolled");
  await store.cache.forget([old.keyHash]);
  return { created: createdKeyOutput(row, key), old: keyOutput(rolled, now) };
}

/** Deletes a key row: the key then reads as unknown (`401 INVALID_API_KEY`) from the next request on. Its events stay. */
export async function removeKey(
  store: KeyStore,
  input: KeyRef,
  now: Date = new Date(),
  by: Actor = OPERATOR_CLI,
): Promise<{ id: string; deleted: true }> {
  const { db } = store;
  const ref = parseInput(KeyRef, input);
  const scoped = ref.tenant === undefined ? undefined : eq(apiKeys.tenantId, ref.tenant);
  const [, deleted] = await db.batch([
    keyEventFromKey(db, ref.id, { action: "deleted", ...by, at: now }, scoped),
    deleteKeyQuery(db, ref.id, ref.tenant),
  ]);
  if (deleted.length === 0) throw await refusal(db, ref, "deleted");
  await store.cache.forget(deleted.map((d) => d.keyHash));
  return { id: ref.id, deleted: true };
}
