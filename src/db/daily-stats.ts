import { and, asc, between, eq, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { dailyStats } from "./schema.ts";

/** One UTC day of a tenant's kept totals (migrations/0005). */
export interface DayStats {
  /** `YYYY-MM-DD` */
  day: string;
  /** Revenue of the day's COMPLETED transactions: integer micro-USDC as a decimal string (never a float). */
  revenue: string;
  requests: number;
  successes: number;
  errors: number;
}

/** Which records a roll-up row counts: all of the tenant's, one paywall's, or one service's. */
export type StatsScope = "tenant" | `paywall:${string}` | `service:${string}`;

/** The roll-up scope of a history filter: its paywall, else its service, else the whole tenant. */
export function statsScope(filter: { paywallId?: string | undefined; serviceId?: string | undefined }): StatsScope {
  if (filter.paywallId) return `paywall:${filter.paywallId}`;
  if (filter.serviceId) return `service:${filter.serviceId}`;
  return "tenant";
}

const empty = (day: string): DayStats => ({ day, revenue: "0", requests: 0, successes: 0, errors: 0 });

/**
 * The kept totals of each of `days` (UTC dates, ascending), one entry per day, zeros for a day without records: one
 * primary-key range read of at most `days.length` rows, whatever the size of the tenant's history.
 */
export async function findDailyStats(
  db: Db,
  tenantId: string,
  days: string[],
  scope: StatsScope = "tenant",
): Promise<DayStats[]> {
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) return [];
  const rows = await db
    .select({
      day: dailyStats.day,
      // As text: SQLite's 64-bit integer stays exact (a JavaScript number would not past 2^53).
      revenue: sql<string>`CAST(${dailyStats.revenue} AS TEXT)`,
      requests: dailyStats.requests,
      successes: dailyStats.successes,
      errors: dailyStats.errors,
    })
    .from(dailyStats)
    .where(and(eq(dailyStats.tenantId, tenantId), eq(dailyStats.scope, scope), between(dailyStats.day, first, last)))
    .orderBy(asc(dailyStats.day));
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return days.map((day) => byDay.get(day) ?? empty(day));
}

/** Paid answers (SUCCESS events) of paywalls whose answers are cached: from the edge cache, or from the upstream. */
export interface CacheTotals {
  hits: number;
  misses: number;
}

/**
 * The edge cache's totals over `days` (UTC dates, ascending), kept by migrations/0014's triggers: the same primary-key
 * range read as `findDailyStats` (at most `days.length` rows).
 */
export async function findCacheTotals(
  db: Db,
  tenantId: string,
  days: string[],
  scope: StatsScope = "tenant",
): Promise<CacheTotals> {
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) return { hits: 0, misses: 0 };
  const [row] = await db
    .select({
      hits: sql<number>`coalesce(sum(${dailyStats.cacheHits}), 0)`,
      misses: sql<number>`coalesce(sum(${dailyStats.cacheMisses}), 0)`,
    })
    .from(dailyStats)
    .where(and(eq(dailyStats.tenantId, tenantId), eq(dailyStats.scope, scope), between(dailyStats.day, first, last)));
  return { hits: Number(row?.hits ?? 0), misses: Number(row?.misses ?? 0) };
}
