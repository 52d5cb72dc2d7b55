import { and, asc, eq, gt, inArray, isNull, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import type { NewEvent } from "./events.ts";
import {
  events,
  type PaywallRow,
  paywalls,
  pendingPayments,
  type ServiceRow,
  services,
  signedUrls,
  type TransactionRow,
  tenants,
  transactions,
} from "./schema.ts";
import type { NewTransaction } from "./transactions.ts";

export interface PaymentTarget {
  paywall: PaywallRow;
  service: ServiceRow;
  tenant: { walletAddress: string; tempoWalletAddress: string | null };
}

const targetColumns = {
  paywall: paywalls,
  service: services,
  tenant: { walletAddress: tenants.walletAddress, tempoWalletAddress: tenants.tempoWalletAddress },
};

/** A paywall with its service and the tenant's wallets, in one query. */
const targetQuery = (db: Db, where: SQL | undefined) =>
  db
    .select(targetColumns)
    .from(paywalls)
    .innerJoin(services, eq(services.id, paywalls.serviceId))
    .innerJoin(tenants, eq(tenants.id, paywalls.tenantId))
    .where(where)
    .limit(1);

const targetByUrl = (db: Db) =>
  targetQuery(
    db,
    and(eq(paywalls.serviceId, sql.placeholder("serviceId")), eq(paywalls.slug, sql.placeholder("slug"))),
  ).prepare();

/** Built once per drizzle instance: every buyer request (each 402 challenge included) runs this query. */
const preparedTargets = new WeakMap<Db, ReturnType<typeof targetByUrl>>();

/** The paywall behind a payment URL. */
export async function findPaymentTarget(db: Db, serviceId: string, slug: string): Promise<PaymentTarget | undefined> {
  let query = preparedTargets.get(db);
  if (!query) {
    query = targetByUrl(db);
    preparedTargets.set(db, query);
  }
  return query.get({ serviceId, slug });
}

/** The paywall a signed URL was paid for (it may have been deleted or detached from its service since). */
export async function findPaymentTargetOfPaywall(db: Db, paywallId: string): Promise<PaymentTarget | undefined> {
  const [row] = await targetQuery(db, eq(paywalls.id, paywallId));
  return row;
}

export type NewSignedUrl = typeof signedUrls.$inferInsert;

export async function insertSignedUrl(db: Db, row: NewSignedUrl): Promise<void> {
  await db.insert(signedUrls).values(row);
}

/**
 * Marks a signed URL used, if it is unused and unexpired: one conditional UPDATE, so of two concurrent
 * fetches exactly one gets the row back.
 */
export async function claimSignedUrl(db: Db, id: string, now: Date) {
  const [row] = await db
    .update(signedUrls)
    .set({ usedAt: now })
    .where(and(eq(signedUrls.id, id), isNull(signedUrls.usedAt), gt(signedUrls.expiresAt, now)))
    .returning();
  return row;
}

export type PendingPayment = Pick<typeof pendingPayments.$inferInsert, "reference" | "validBefore" | "asset" | "payTo">;

/**
 * A payment's start in one atomic batch: its PENDING transaction, its REQUEST event, and what settles it from the
 * chain later (`pending_payments`). All ids derive from the payment, so a replay inserts none. Returns whether this
 * call created the transaction: of two concurrent starts of one payment exactly one gets `true`, and a fault
 * between the writes leaves none.
 */
export async function insertPaymentStart(
  db: Db,
  transaction: NewTransaction,
  event: NewEvent,
  pending: PendingPayment,
): Promise<boolean> {
  const [inserted] = await db.batch([
    db
      .insert(transactions)
      .values(transaction)
      .onConflictDoNothing({ target: transactions.id })
      .returning({ id: transactions.id }),
    db.insert(events).values(event).onConflictDoNothing({ target: events.id }),
    db
      .insert(pendingPayments)
      .values({ ...pending, transactionId: transaction.id, tenantId: transaction.tenantId })
      .onConflictDoNothing({ target: pendingPayments.transactionId }),
  ]);
  return inserted.length === 1;
}

/**
 * A payment's outcome in one atomic batch: PENDING → COMPLETED or FAILED, its SUCCESS or ERROR event (one per
 * payment: the event id derives from it), and its `pending_payments` row gone. Returns whether the transaction was
 * still PENDING.
 */
export async function settlePaymentWithEvent(
  db: Db,
  id: string,
  change: Pick<TransactionRow, "status" | "txHash" | "settledAt" | "failureReason">,
  event: NewEvent,
): Promise<boolean> {
  const [settled] = await db.batch([
    db
      .update(transactions)
      .set(change)
      .where(and(eq(transactions.id, id), eq(transactions.status, "PENDING")))
      .returning({ id: transactions.id }),
    db.insert(events).values(event).onConflictDoNothing({ target: events.id }),
    db.delete(pendingPayments).where(eq(pendingPayments.transactionId, id)),
  ]);
  return settled.length === 1;
}

/**
 * A PENDING transaction whose settlement outcome is unknown (sent, not seen on chain yet): its hash, when known,
 * is kept on the transaction so the tenant sees it. Returns whether the transaction was still PENDING.
 */
export async function notePendingHash(db: Db, id: string, txHash: string): Promise<boolean> {
  const rows = await db
    .update(transactions)
    .set({ txHash })
    .where(and(eq(transactions.id, id), eq(transactions.status, "PENDING")))
    .returning({ id: transactions.id });
  return rows.length === 1;
}

/** A transaction's status and hash (a replayed payment's answer depends on them). */
export async function findTransactionState(db: Db, id: string) {
  const [row] = await db
    .select({ status: transactions.status, txHash: transactions.txHash })
    .from(transactions)
    .where(eq(transactions.id, id));
  return row;
}

/**
 * PENDING gateway payments started before `startedBefore`, least recently checked first (never checked: by when
 * they started), with their paywall when it still exists (a paywall is deleted for good; its payments are not).
 */
export async function findPendingPayments(db: Db, startedBefore: Date, limit: number) {
  return db
    .select({ pending: pendingPayments, transaction: transactions, paywall: paywalls })
    .from(pendingPayments)
    .innerJoin(transactions, eq(transactions.id, pendingPayments.transactionId))
    .leftJoin(paywalls, eq(paywalls.id, transactions.paywallId))
    .where(and(eq(transactions.status, "PENDING"), lt(pendingPayments.createdAt, startedBefore)))
    .orderBy(asc(sql`coalesce(${pendingPayments.checkedAt}, ${pendingPayments.createdAt})`), asc(pendingPayments.createdAt))
    .limit(limit);
}

/** The sweep asked the chain about these payments and they stay PENDING: to the back of its queue. */
export async function notePaymentsChecked(db: Db, transactionIds: string[], now: Date): Promise<void> {
  // D1 binds at most 100 parameters per statement.
  for (let i = 0; i < transactionIds.length; i += 90) {
    await db
      .update(pendingPayments)
      .set({ checkedAt: now, attempts: sql`${pendingPayments.attempts} + 1` })
      .where(inArray(pendingPayments.transactionId, transactionIds.slice(i, i + 90)));
  }
}
