// The read model of sessions' payment channels (written only by `applyPaymentRecords`, src/db/ledger.ts): a tenant's
// channels newest opened first, one channel, and the sums the dashboard shows.
import { and, count, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import type { Page } from "./page.ts";
import { type ChannelRow, type ChannelStatus, channels } from "./schema.ts";

export interface ChannelFilter {
  status?: ChannelStatus | undefined;
  paywallId?: string | undefined;
  network?: string | undefined;
}

function channelsWhere(tenantId: string, filter: ChannelFilter): SQL {
  const conditions: SQL[] = [eq(channels.tenantId, tenantId)];
  if (filter.status) conditions.push(eq(channels.status, filter.status));
  if (filter.paywallId) conditions.push(eq(channels.paywallId, filter.paywallId));
  if (filter.network) conditions.push(eq(channels.network, filter.network));
  return and(...conditions) as SQL;
}

/** A page of the tenant's channels (newest opened first) and the filtered total: one batch of two statements. */
export async function findChannelsPage(
  db: Db,
  tenantId: string,
  page: Page,
  filter: ChannelFilter = {},
): Promise<{ total: number; rows: ChannelRow[] }> {
  const where = channelsWhere(tenantId, filter);
  const [[total], rows] = await db.batch([
    db.select({ n: count() }).from(channels).where(where),
    db
      .select()
      .from(channels)
      .where(where)
      .orderBy(desc(channels.openedAt), desc(channels.id))
      .limit(page.limit)
      .offset(page.offset),
  ]);
  return { total: total?.n ?? 0, rows };
}

/** One of the tenant's channels by its id (lowercase hex); another tenant's is not found. */
export async function findChannel(db: Db, tenantId: string, id: string): Promise<ChannelRow | undefined> {
  const [row] = await db
    .select()
    .from(channels)
    .where(and(eq(channels.tenantId, tenantId), eq(channels.id, id)))
    .limit(1);
  return row;
}

/**
 * The tenant's channels summed per token (integer micro-units as decimal strings, summed by SQLite's integers, never
 * floats): how many are open, what vouchers charged, and what of it is not settled to the wallet yet.
 */
export async function sumChannels(db: Db, tenantId: string) {
  return db
    .select({
      currency: channels.currency,
      open: sql<number>`sum(${channels.status} = 'OPEN')`.mapWith(Number),
      charged: sql<string>`cast(sum(cast(${channels.charged} AS integer)) AS text)`,
      unsettled: sql<string>`cast(sum(cast(${channels.charged} AS integer) - cast(${channels.settled} AS integer)) AS text)`,
    })
    .from(channels)
    .where(eq(channels.tenantId, tenantId))
    .groupBy(channels.currency)
    .orderBy(channels.currency);
}
