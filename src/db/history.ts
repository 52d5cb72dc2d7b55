import { and, type Column, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/** Filters shared by transactions and events. */
export interface HistoryFilter {
  paywallId?: string | undefined;
  serviceId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

interface HistoryColumns {
  tenantId: SQLiteColumn;
  paywallId: SQLiteColumn;
  serviceId: SQLiteColumn;
  createdAt: SQLiteColumn;
  id: SQLiteColumn;
}

/** The WHERE of a tenant's history list: tenant first, so every filter runs on a (tenant, …, created_at) index. */
export function historyWhere(
  table: HistoryColumns,
  tenantId: string,
  filter: HistoryFilter,
  extra: [Column, unknown][] = [],
): SQL {
  const conditions: SQL[] = [eq(table.tenantId, tenantId)];
  if (filter.paywallId) conditions.push(eq(table.paywallId, filter.paywallId));
  if (filter.serviceId) conditions.push(eq(table.serviceId, filter.serviceId));
  if (filter.from) conditions.push(gte(table.createdAt, filter.from));
  if (filter.to) conditions.push(lte(table.createdAt, filter.to));
  for (const [column, value] of extra) if (value !== undefined) conditions.push(eq(column, value));
  return and(...conditions) as SQL;
}

export const newestFirst = (table: HistoryColumns) => [desc(table.createdAt), desc(table.id)];
