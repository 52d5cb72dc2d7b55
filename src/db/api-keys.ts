import { and, count, desc, eq, gt, isNull, lt, ne, or } from "drizzle-orm";
import type { Db } from "./client.ts";
import { type ApiKeyRow, apiKeys, type KeyStatus, type Tenant, tenants } from "./schema.ts";

export const MAX_ACTIVE_KEYS_PER_TENANT = 20;

/** The key with its tenant, by the SHA-256 of the raw key: one indexed query. */
export async function findKeyWithTenantByHash(db: Db, keyHash: string): Promise<{ key: ApiKeyRow; tenant: Tenant } | undefined> {
  const [row] = await db
    .select({ key: apiKeys, tenant: tenants })
    .from(apiKeys)
    .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
    .where(eq(apiKeys.keyHash, keyHash))
    .limit(1);
  return row;
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
