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

/** Active means usable or paused: not revoked and not past its expiry. */
export async function countActiveKeys(db: Db, tenantId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.tenantId, tenantId),
        ne(apiKeys.status, "revoked"),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
      ),
    );
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
 * SQLite runs it atomically, so concurrent creates can never exceed the limit.
 * `undefined` when nothing was inserted (limit reached, or no such tenant).
 */
export async function insertKeyWithinLimit(db: Db, row: NewKeyRow, now: Date, max: number): Promise<ApiKeyRow | undefined> {
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
  const activeCount = db
    .select({ n: count() })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.tenantId, row.tenantId),
        ne(apiKeys.status, "revoked"),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
      ),
    );
  const [inserted] = await db
    .insert(apiKeys)
    .select(sql`select ${selectList} from ${tenants} where ${tenants.id} = ${row.tenantId} and (${activeCount}) < ${max}`)
    .returning();
  return inserted;
}

/**
 * Sets `status` (`active` or `paused`) unless the key is revoked: one conditional UPDATE, so a concurrent
 * revoke cannot be undone. `undefined` when no row changed (unknown id, or revoked).
 */
export async function setKeyStatusUnlessRevoked(db: Db, id: string, status: "active" | "paused"): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ status })
    .where(and(eq(apiKeys.id, id), ne(apiKeys.status, "revoked")))
    .returning();
  return row;
}

/** Revokes the key unless it already is: `undefined` when no row changed (unknown id, or already revoked). */
export async function revokeKeyIfNotRevoked(db: Db, id: string, now: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ status: "revoked", revokedAt: now })
    .where(and(eq(apiKeys.id, id), ne(apiKeys.status, "revoked")))
    .returning();
  return row;
}
