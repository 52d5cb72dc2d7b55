import { and, eq, like, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { tenantCounts } from "./schema.ts";

export type CountKind = "services" | "paywalls" | "transactions";

/** The tenant's number of `kind` rows, as a scalar subquery (one primary-key read; 0 when none were ever written). */
export const countOf = (tenantId: string, kind: CountKind): SQL<number> =>
  sql<number>`coalesce((SELECT ${tenantCounts.n} FROM ${tenantCounts} WHERE ${tenantCounts.tenantId} = ${tenantId} AND ${tenantCounts.kind} = ${kind}), 0)`;

/** The same as a query of its own, for a batch. */
export const selectCountOf = (db: Db, tenantId: string, kind: CountKind) =>
  db.select({ n: countOf(tenantId, kind) }).from(sql`(SELECT 1)`);

/** The tenant's event counts per type (`events:REQUEST`, …). */
export const selectEventCounts = (db: Db, tenantId: string) =>
  db
    .select({ kind: tenantCounts.kind, n: tenantCounts.n })
    .from(tenantCounts)
    .where(and(eq(tenantCounts.tenantId, tenantId), like(tenantCounts.kind, "events:%")));
