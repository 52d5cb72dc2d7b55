import { and, count, eq, getTableColumns, lt, or, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db } from "./client.ts";
import { selectCountOf } from "./counts.ts";
import { type HistoryFilter, historyWhere, newestFirst } from "./history.ts";
import type { Page } from "./page.ts";
import { paywalls, type TransactionRow, type TransactionStatus, transactions } from "./schema.ts";

export interface TransactionFilter extends HistoryFilter {
  status?: TransactionStatus | undefined;
  network?: string | undefined;
  protocol?: "x402" | "mpp" | undefined;
  /** One payment, by its transaction id (the dashboard finds the id of a transfer's hash first). */
  id?: string | undefined;
}

/** The filter's own columns, beside the history ones: every list of transactions applies all of them. */
const filterColumns = (filter: TransactionFilter): [SQLiteColumn, unknown][] => [
  [transactions.status, filter.status],
  [transactions.network, filter.network],
  [transactions.protocol, filter.protocol],
  [transactions.id, filter.id],
];

export type NewTransaction = typeof transactions.$inferInsert;

const withPaywall = { ...getTableColumns(transactions), paywallSlug: paywalls.slug, paywallName: paywalls.name };
export type TransactionWithPaywall = TransactionRow & { paywallSlug: string | null; paywallName: string | null };

/** A page of a tenant's transactions with their paywall summary, and the filtered total: one batch of two statements. */
export async function findTransactionsPage(db: Db, tenantId: string, page: Page, filter: TransactionFilter = {}) {
  const where = historyWhere(transactions, tenantId, filter, filterColumns(filter));
  const unfiltered = Object.values(filter).every((v) => v === undefined);
  const [[total], rows] = await db.batch([
    unfiltered ? selectCountOf(db, tenantId, "transactions") : db.select({ n: count() }).from(transactions).where(where),
    db
      .select(withPaywall)
      .from(transactions)
      .leftJoin(paywalls, eq(paywalls.id, transactions.paywallId))
      .where(where)
      .orderBy(...newestFirst(transactions))
      .limit(page.limit)
      .offset(page.offset),
  ]);
  return { total: total?.n ?? 0, rows: rows as TransactionWithPaywall[] };
}

/** The id of the tenant's transaction whose transfer on chain has this hash (hex, any letter case), if any. */
export async function findTransactionIdByHash(db: Db, tenantId: string, txHash: string): Promise<string | undefined> {
  const [row] = await db
    .select({ id: transactions.id })
    .from(transactions)
    .where(and(eq(transactions.tenantId, tenantId), eq(transactions.txHash, txHash.toLowerCase())))
    .limit(1);
  return row?.id;
}

export async function findTransaction(db: Db, id: string): Promise<TransactionWithPaywall | undefined> {
  const [row] = await db
    .select(withPaywall)
    .from(transactions)
    .leftJoin(paywalls, eq(paywalls.id, transactions.paywallId))
    .where(eq(transactions.id, id))
    .limit(1);
  return row as TransactionWithPaywall | undefined;
}

/**
 * The next `limit` transactions of the filtered list after `after` (newest first, keyset on created_at and id): an
 * export reads the whole list a page at a time, whatever its size, with bounded memory.
 */
export async function findTransactionsAfter(
  db: Db,
  tenantId: string,
  filter: TransactionFilter,
  after: { createdAt: Date; id: string } | undefined,
  limit: number,
): Promise<TransactionWithPaywall[]> {
  const where = historyWhere(transactions, tenantId, filter, filterColumns(filter));
  const before: SQL | undefined = after
    ? or(
        lt(transactions.createdAt, after.createdAt),
        and(eq(transactions.createdAt, after.createdAt), lt(transactions.id, after.id)),
      )
    : undefined;
  const rows = await db
    .select(withPaywall)
    .from(transactions)
    .leftJoin(paywalls, eq(paywalls.id, transactions.paywallId))
    .where(before ? and(where, before) : where)
    .orderBy(...newestFirst(transactions))
    .limit(limit);
  return rows as TransactionWithPaywall[];
}
