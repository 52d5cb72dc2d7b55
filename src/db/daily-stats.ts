import { and, between, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { dailyRevenue, dailyStats } from "./schema.ts";

/** One UTC day of a tenant's kept traffic (migrations/0005). */
export interface DayTraffic {
  /** `YYYY-MM-DD` */
  day: string;
  requests: number;
  successes: number;
  errors: number;
}

/** A day of traffic with its revenue in one token: what the earnings charts draw. */
export interface DayStats extends DayTraffic {
  /**
   * Revenue of the day's COMPLETED transactions on the networks asked (one token's): integer micro-units as a decimal
   * string (never a float).
   */
  revenue: string;
}

/** Which records a roll-up row counts: all of the tenant's, one paywall's, or one service's. */
export type StatsScope = "tenant" | `paywall:${string}` | `service:${string}`;

/** The roll-up scope of a history filter: its paywall, else its service, else the whole tenant. */
export function statsScope(filter: { paywallId?: string | undefined; serviceId?: string | undefined }): StatsScope {
  if (filter.paywallId) return `paywall:${filter.paywallId}`;
  if (filter.serviceId) return `service:${filter.serviceId}`;
  return "tenant";
}

const empty = (day: string): DayTraffic => ({ day, requests: 0, successes: 0, errors: 0 });

/**
 * The kept traffic of each of `days` (UTC dates, ascending), one entry per day, zeros for a day without records: one
 * primary-key range read of `daily_stats` (at most `days.length` rows), whatever the size of the tenant's history.
 * Revenue is kept per network (`findDailyRevenue`) and added per token by `daysInToken`.
 */
export async function findDailyTraffic(db: Db, tenantId: string, days: string[], scope: StatsScope): Promise<DayTraffic[]> {
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
  return days.map((day) => byDay.get(day) ?? empty(day));
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

/** Paid answers (SUCCESS events) of paywalls whose answers are cached: from the edge cache, or from the upstream. */
export interface CacheTotals {
  hits: number;
  misses: number;
}

/**
 * The edge cache's totals over `days` (UTC dates, ascending), kept by migrations/0014's triggers: the same primary-key
 * range read as `findDailyTraffic` (at most `days.length` rows).
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
