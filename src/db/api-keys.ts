import { and, count, desc, eq, getTableColumns, gt, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { type ApiKeyRow, apiKeys, type KeyStatus, type Tenant, tenants } from "./schema.ts";

export const MAX_ACTIVE_KEYS_PER_TENANT = 20;

const keyWithTenantByHash = (db: Db) =>
  db
    .select({ key: apiKeys, tenant: tenants })
    .from(apiKeys)
    .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
    .where(eq(apiKeys.keyHash, sql.placeholder("keyHash")))
    .limit(1)
    .prepare();

/** Built once per drizzle instance: this query runs on every authenticated request. */
const preparedLookups = new WeakMap<Db, ReturnType<typeof keyWithTenantByHash>>();

/** The key with its tenant, by the SHA-256 of the raw key: one indexed query. */
export async function findKeyWithTenantByHash(db: Db, keyHash: string): Promise<{ key: ApiKeyRow; tenant: Tenant } | undefined> {
  let lookup = preparedLookups.get(db);
  if (!lookup) {
    lookup = keyWithTenantByHash(db);
    preparedLookups.set(db, lookup);
  }
  return lookup.get({ keyHash });
}

/** Records use at most once per `minIntervalMs`: the condition makes concurrent writers harmless. */
export async function touchKeyLastUsed(db: Db, keyId: string, now: Date, minIntervalMs: number): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(
      and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, new Date(now.getTime() - minIntervalMs)))),
    );
}

export async function findKeyById(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.query.apiKeys.findFirst({ where: eq(apiKeys.id, id) });
}

export async function listKeysOfTenant(db: Db, tenantId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.tenantId, tenantId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

/** The subquery counting the tenant's active keys (not revoked, not expired at `now`; paused keys count). */
const activeKeyCount = (db: Db, tenantId: string, now: Date) =>
  db
    .select({ n: count() })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.tenantId, tenantId),
        ne(apiKeys.status, "revoked"),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
      ),
    );

/** Active means usable or paused: not revoked and not past its expiry. */
export async function countActiveKeys(db: Db, tenantId: string, now: Date): Promise<number> {
  const [row] = await activeKeyCount(db, tenantId, now);
  return row?.n ?? 0;
}

export type NewKeyRow = typeof apiKeys.$inferInsert;

export async function insertKey(db: Db, row: NewKeyRow): Promise<ApiKeyRow> {
  const [inserted] = await db.insert(apiKeys).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

export async function setKeyStatus(db: Db, id: string, status: KeyStatus, now: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ status, revokedAt: status === "revoked" ? now : null })
    .where(eq(apiKeys.id, id))
    .returning();
  return row;
}

export async function deleteKey(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(apiKeys).where(eq(apiKeys.id, id)).returning({ id: apiKeys.id });
  return rows.length > 0;
}

/**
 * Inserts the key only if its tenant exists and holds fewer than `max` active keys (not revoked, not expired
 * at `now`; paused keys count). One `INSERT … SELECT … FROM tenants WHERE id = ? AND (count) < max` statement:
 * SQLite runs it atomically, so concurrent creates can never exceed the limit. Returns the statement (run it
 * alone or in a batch); it returns no row when nothing was inserted (limit reached, or no such tenant).
 */
export function insertKeyWithinLimitQuery(db: Db, row: NewKeyRow, now: Date, max: number) {
  // Every column in table order (the order drizzle lists them in `insert into … (…)`; the table has no
  // generated column), each value encoded by its own column (JSON, timestamps), defaults applied as `.values()` would.
  const values: Record<string, unknown> = row;
  const selectList = sql.join(
    Object.entries(getTableColumns(apiKeys)).map(([key, column]) => {
      const value = values[key] ?? (column.defaultFn ? column.defaultFn() : column.default) ?? null;
      return value === null ? sql`null` : sql.param(value, column);
    }),
    sql`, `,
  );
  return db
    .insert(apiKeys)
    .select(
      sql`select ${selectList} from ${tenants} where ${tenants.id} = ${row.tenantId} and (${activeKeyCount(db, row.tenantId, now)}) < ${max}`,
    )
    .returning();
}

/** The key `id`, limited to `tenantId` when given (the dashboard acts within one tenant; the operator CLI on any key). */
const keyMatch = (id: string, tenantId: string | undefined) =>
  tenantId === undefined ? eq(apiKeys.id, id) : and(eq(apiKeys.id, id), eq(apiKeys.tenantId, tenantId));

/** Sets `active` or `paused` unless the key is revoked: one conditional UPDATE, so a concurrent revoke cannot be undone. */
export const setKeyStatusUnlessRevokedQuery = (db: Db, id: string, tenantId: string | undefined, status: "active" | "paused") =>
  db
    .update(apiKeys)
    .set({ status })
    .where(and(keyMatch(id, tenantId), ne(apiKeys.status, "revoked")))
    .returning();

/** Revokes the key unless it already is. */
export const revokeKeyIfNotRevokedQuery = (db: Db, id: string, tenantId: string | undefined, now: Date) =>
  db
    .update(apiKeys)
    .set({ status: "revoked", revokedAt: now })
    .where(and(keyMatch(id, tenantId), ne(apiKeys.status, "revoked")))
    .returning();

/**
 * The old key of a roll: revoked at `revokeAt`, or expiring at `expireAt`, only if the new key `newId` was just
 * inserted (same batch) and the old one is not revoked.
 */
export const rollOldKeyQuery = (db: Db, id: string, newId: string, when: { revokeAt: Date } | { expireAt: Date }) =>
  db
    .update(apiKeys)
    .set("revokeAt" in when ? { status: "revoked", revokedAt: when.revokeAt } : { expiresAt: when.expireAt })
    .where(
      and(eq(apiKeys.id, id), ne(apiKeys.status, "revoked"), sql`exists (select 1 from ${apiKeys} as k where k.id = ${newId})`),
    )
    .returning();

export interface KeyEdit {
  name: string;
  scopes: string[];
  expiresAt: Date | null;
  allowedIps: string[];
}

/**
 * Edits a key unless it is revoked. An edit that would bring an expired key back (a later expiry) counts it as
 * active again, so it is applied only while the tenant holds fewer than `max` active keys.
 */
export const editKeyQuery = (db: Db, id: string, tenantId: string, edit: KeyEdit, now: Date, max: number) =>
  db
    .update(apiKeys)
    .set(edit)
    .where(
      and(
        keyMatch(id, tenantId),
        ne(apiKeys.status, "revoked"),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now), lt(activeKeyCount(db, tenantId, now), max)),
      ),
    )
    .returning();

export const deleteKeyQuery = (db: Db, id: string, tenantId: string | undefined) =>
  db.delete(apiKeys).where(keyMatch(id, tenantId)).returning({ id: apiKeys.id, keyHash: apiKeys.keyHash });

/** The hashes of the tenant's keys that are not revoked (a revoked key is refused whatever its tenant's record says). */
export async function listLiveKeyHashesOfTenant(db: Db, tenantId: string): Promise<string[]> {
  const rows = await db
    .select({ keyHash: apiKeys.keyHash })
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), ne(apiKeys.status, "revoked")));
  return rows.map((r) => r.keyHash);
}
