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

/** The tenant's catalog version: one primary-key read. */
export async function findCatalogVersion(db: Db, tenantId: string): Promise<number> {
  const [row] = await selectCatalogVersion(db, tenantId);
  return row?.version ?? 0;
}
