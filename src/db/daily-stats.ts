import { and, between, eq, gte, inArray, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { dailyRevenue, dailyStats } from "./schema.ts";

/** One UTC day of a tenant's kept totals (migrations/0005, 0018). */
export interface DayStats {
  /** `YYYY-MM-DD` */
  day: string;
  /**
   * Revenue of the day's COMPLETED transactions on the networks asked (one token's): integer micro-units as a decimal
   * string (never a float).
   */
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
 * The kept traffic of each of `days` (UTC dates, ascending), one entry per day, zeros for a day without records: one
 * primary-key range read of `daily_stats` (at most `days.length` rows), whatever the size of the tenant's history.
 * `revenue` is "0" here: revenue is kept per network (`findDailyRevenue`) and added per token by the caller.
 */
export async function findDailyStats(db: Db, tenantId: string, days: string[], scope: StatsScope): Promise<DayStats[]> {
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) return [];
  const rows = await db
    .select({
      day: dailyStats.day,
      requests: dailyStats.requests,
      successes: dailyStats.successes,
      errors: dailyStats.errors,
    })
    .from(dailyStats)
    .where(and(eq(dailyStats.tenantId, tenantId), eq(dailyStats.scope, scope), between(dailyStats.day, first, last)));
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return days.map((day) => ({ ...(byDay.get(day) ?? empty(day)), revenue: "0" }));
}

/** A day's completed revenue on one network: integer micro-units of its token, as text. */
export interface DayRevenue {
  day: string;
  network: string;
  amount: string;
}

/**
 * The kept completed revenue of `days` (UTC dates, ascending) per network, on `networks`: one primary-key range read of
 * `daily_revenue` (at most `days.length` × networks rows). Amounts as text: SQLite's 64-bit integers stay exact.
 */
export async function findDailyRevenue(
  db: Db,
  tenantId: string,
  days: string[],
  scope: StatsScope,
  networks: readonly string[],
): Promise<DayRevenue[]> {
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined || networks.length === 0) return [];
  return db
    .select({
      day: dailyRevenue.day,
      network: dailyRevenue.network,
      amount: sql<string>`CAST(${dailyRevenue.amount} AS TEXT)`,
    })
    .from(dailyRevenue)
    .where(
      and(
        eq(dailyRevenue.tenantId, tenantId),
        eq(dailyRevenue.scope, scope),
        between(dailyRevenue.day, first, last),
        inArray(dailyRevenue.network, [...networks]),
      ),
    );
}

/** Completed revenue of one network since each date of a list of windows: `sums[i]` since the i-th date. */
export interface NetworkTotals {
  network: string;
  /** Integer micro-units, as decimal strings. */
  sums: string[];
}

/**
 * Completed revenue per network since each day of `since` (UTC dates; the oldest bounds the read), in `scope`, on
 * `networks` (all when undefined): one range read of `daily_revenue`, sums read as text. The caller adds networks of
 * one token together, never two tokens.
 */
export async function findNetworkTotals(
  db: Db,
  tenantId: string,
  scope: StatsScope,
  since: string[],
  networks?: readonly string[],
): Promise<NetworkTotals[]> {
  if (since.length === 0) return [];
  const oldest = [...since].sort()[0] as string;
  const sums = since.map((day, i) =>
    sql<string>`CAST(coalesce(sum(CASE WHEN ${dailyRevenue.day} >= ${day} THEN ${dailyRevenue.amount} ELSE 0 END), 0) AS TEXT)`.as(
      `s${i}`,
    ),
  );
  const rows = await db
    .select({ network: dailyRevenue.network, ...Object.fromEntries(sums.map((s, i) => [`s${i}`, s])) })
    .from(dailyRevenue)
    .where(
      and(
        eq(dailyRevenue.tenantId, tenantId),
        eq(dailyRevenue.scope, scope),
        gte(dailyRevenue.day, oldest),
        networks ? inArray(dailyRevenue.network, [...networks]) : undefined,
      ),
    )
    .groupBy(dailyRevenue.network)
    .orderBy(dailyRevenue.network);
  return rows.map((r) => ({
    network: r.network,
    sums: since.map((_, i) => String((r as Record<string, unknown>)[`s${i}`])),
  }));
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
