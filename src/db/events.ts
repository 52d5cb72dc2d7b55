import { and, count, eq, getTableColumns, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { selectEventCounts } from "./counts.ts";
import { type HistoryFilter, historyWhere, newestFirst } from "./history.ts";
import type { Page } from "./page.ts";
import { EVENT_TYPES, type EventRow, type EventType, events, paywalls } from "./schema.ts";

export interface EventFilter extends HistoryFilter {
  eventType?: EventType | undefined;
  /** The payment's protocol and network, as the ledger records them in each event's metadata. */
  protocol?: string | undefined;
  network?: string | undefined;
  /** Only these events (one payment's request and outcome). */
  ids?: string[] | undefined;
}

/** The conditions beyond the history's: the payment's protocol and network (in each event's metadata), its ids. */
function metadataWhere(filter: EventFilter): SQL[] {
  const conditions: SQL[] = [];
  if (filter.protocol) conditions.push(sql`json_extract(${events.metadata}, '$.protocol') = ${filter.protocol}`);
  if (filter.network) conditions.push(sql`json_extract(${events.metadata}, '$.network') = ${filter.network}`);
  if (filter.ids) conditions.push(inArray(events.id, filter.ids));
  return conditions;
}

export type NewEvent = typeof events.$inferInsert;
export type EventWithPaywall = EventRow & { paywallSlug: string | null; paywallName: string | null };
export type EventStats = Record<EventType, number>;

const withPaywall = { ...getTableColumns(events), paywallSlug: paywalls.slug, paywallName: paywalls.name };

/**
 * A page of a tenant's events with their paywall summary, and counts per event type over the whole
 * filtered set (the kept counts when unfiltered, else one grouped query; the total is their sum): one batch of two statements.
 */
export async function findEventsPage(db: Db, tenantId: string, page: Page, filter: EventFilter = {}) {
  const where = and(
    historyWhere(events, tenantId, filter, [[events.eventType, filter.eventType]]),
    ...metadataWhere(filter),
  ) as SQL;
  const unfiltered = Object.values(filter).every((v) => v === undefined);
  const [grouped, rows] = await db.batch([
    unfiltered
      ? selectEventCounts(db, tenantId)
      : db
          .select({ kind: sql<string>`'events:' || ${events.eventType}`, n: count() })
          .from(events)
          .where(where)
          .groupBy(events.eventType),
    db
      .select(withPaywall)
      .from(events)
      .leftJoin(paywalls, eq(paywalls.id, events.paywallId))
      .where(where)
      .orderBy(...newestFirst(events))
      .limit(page.limit)
      .offset(page.offset),
  ]);
  const stats = Object.fromEntries(EVENT_TYPES.map((t) => [t, 0])) as EventStats;
  for (const { kind, n } of grouped) stats[kind.slice("events:".length) as EventType] = n;
  const total = Object.values(stats).reduce((a, b) => a + b, 0);
  return { total, stats, rows: rows as EventWithPaywall[] };
}

export async function findEvent(db: Db, id: string): Promise<EventWithPaywall | undefined> {
  const [row] = await db
    .select(withPaywall)
    .from(events)
    .leftJoin(paywalls, eq(paywalls.id, events.paywallId))
    .where(eq(events.id, id))
    .limit(1);
  return row as EventWithPaywall | undefined;
}

/** Inserts the rows atomically; a row whose id is already stored is left as it is. Returns the ids this call inserted. */
export async function insertEvents(db: Db, rows: NewEvent[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const [first, ...rest] = rows.map((row) =>
    db.insert(events).values(row).onConflictDoNothing({ target: events.id }).returning({ id: events.id }),
  );
  const results = await db.batch([first!, ...rest]);
  return results.flat().map((r) => r.id);
}

export async function findEventsByIds(db: Db, ids: string[]): Promise<EventRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(events).where(inArray(events.id, ids));
}
