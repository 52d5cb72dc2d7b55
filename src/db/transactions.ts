import { and, count, eq, getTableColumns, inArray } from "drizzle-orm";
import type { Db } from "./client.ts";
import { selectCountOf } from "./counts.ts";
import { type HistoryFilter, historyWhere, newestFirst } from "./history.ts";
import type { Page } from "./page.ts";
import { paywalls, type TransactionRow, type TransactionStatus, transactions } from "./schema.ts";

export interface TransactionFilter extends HistoryFilter {
  status?: TransactionStatus | undefined;
  network?: string | undefined;
  protocol?: "x402" | "mpp" | undefined;
}

export type NewTransaction = typeof transactions.$inferInsert;

const withPaywall = { ...getTableColumns(transactions), paywallSlug: paywalls.slug, paywallName: paywalls.name };
export type TransactionWithPaywall = TransactionRow & { paywallSlug: string | null; paywallName: string | null };

/** A page of a tenant's transactions with their paywall summary, and the filtered total: one batch of two statements. */
export async function findTransactionsPage(db: Db, tenantId: string, page: Page, filter: TransactionFilter = {}) {
  const where = historyWhere(transactions, tenantId, filter, [
    [transactions.status, filter.status],
    [transactions.network, filter.network],
    [transactions.protocol, filter.protocol],
  ]);
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
 * Inserts the rows atomically; a row whose id is already stored is left as it is (idempotent retries).
 * Returns the ids this call inserted: the insert itself decides who created a row, even under concurrency.
 */
export async function insertTransactions(db: Db, rows: NewTransaction[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const [first, ...rest] = rows.map((row) =>
    db.insert(transactions).values(row).onConflictDoNothing({ target: transactions.id }).returning({ id: transactions.id }),
  );
  const results = await db.batch([first!, ...rest]);
  return results.flat().map((r) => r.id);
}

export async function findTransactionsByIds(db: Db, ids: string[]): Promise<TransactionRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(transactions).where(inArray(transactions.id, ids));
}

/** Moves a PENDING transaction to its final state; returns the row only if it was PENDING. */
export async function settlePending(
  db: Db,
  id: string,
  change: { status: "COMPLETED" | "FAILED"; txHash: string | null; settledAt: Date; failureReason: string | null },
): Promise<TransactionRow | undefined> {
  const [row] = await db
    .update(transactions)
    .set(change)
    .where(and(eq(transactions.id, id), eq(transactions.status, "PENDING")))
    .returning();
  return row;
}
