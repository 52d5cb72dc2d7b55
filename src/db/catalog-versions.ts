import { sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { catalogVersions } from "./schema.ts";

/** The tenant's catalog version (0 before its first service or paywall), as a statement of its own for a batch. */
export const selectCatalogVersion = (db: Db, tenantId: string) =>
  db
    .select({
      version: sql<number>`coalesce((SELECT ${catalogVersions.version} FROM ${catalogVersions} WHERE ${catalogVersions.tenantId} = ${tenantId}), 0)`,
    })
    .from(sql`(SELECT 1)`);

/**
 * The tenant's catalog version: one primary-key read, sent as written here rather than built by drizzle's query
 * builder, since it is the one query of every services or paywalls page (the request's drizzle instance is new
 * with its D1 session, so a prepared query could not be kept across requests).
 */
export async function findCatalogVersion(db: Db, tenantId: string): Promise<number> {
  const version = await db.$client
    .prepare("SELECT version FROM catalog_versions WHERE tenant_id = ?1")
    .bind(tenantId)
    .first<number>("version")
    .catch((err: unknown) => {
      // Marked as D1's, as drizzle's own query errors are (src/db/errors.ts): a 500 DATABASE_ERROR, its text never shown.
      throw new Error("D1_QUERY_ERROR: the catalog version read failed", { cause: err });
    });
  return version ?? 0;
}
