// The payment ledger's writes and reads: each move of a payment is one of these statements or batches, guarded by
// the state it moves from (src/core/ledger/ledger.ts owns the moves; nothing else writes a transaction's status).
import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import type { NewEvent } from "./events.ts";
import { events, pendingPayments, type TransactionRow, transactions } from "./schema.ts";
import type { NewTransaction } from "./transactions.ts";
import type { webhookFanOutStatement } from "./webhooks.ts";

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
  const [inserted] = await db.batch(paymentStartStatements(db, transaction, event, pending));
  return inserted.length === 1;
}

/** The statements of a payment's start (see `insertPaymentStart`), for a batch of one payment or of many. */
export function paymentStartStatements(db: Db, transaction: NewTransaction, event: NewEvent, pending: PendingPayment) {
  return [
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
  ] as const;
}

/** The webhook statement a move adds to its batch (`webhookFanOutStatement`): it returns the deliveries it wrote. */
export type WebhookStatement = ReturnType<typeof webhookFanOutStatement>;

/**
 * A payment's outcome in one atomic batch: PENDING → COMPLETED or FAILED, its SUCCESS or ERROR event (one per
 * payment: the event id derives from it), its `pending_payments` row gone, and its webhook deliveries. Returns
 * whether the transaction was still PENDING, and the deliveries written.
 */
export async function closePendingPayment(
  db: Db,
  id: string,
  change: PaymentClose,
  event: NewEvent,
  webhook: WebhookStatement,
): Promise<{ moved: boolean; deliveries: { id: string }[] }> {
  const [settled, , , deliveries] = await db.batch(paymentCloseStatements(db, id, change, event, webhook));
  return { moved: settled.length === 1, deliveries };
}

export type PaymentClose = Pick<TransactionRow, "status" | "txHash" | "settledAt" | "failureReason">;

/** The statements of a payment's outcome (see `closePendingPayment`), for a batch of one payment or of many. */
export function paymentCloseStatements(db: Db, id: string, change: PaymentClose, event: NewEvent, webhook: WebhookStatement) {
  return [
    db
      .update(transactions)
      .set(change)
      .where(and(eq(transactions.id, id), eq(transactions.status, "PENDING")))
      .returning({ id: transactions.id }),
    db.insert(events).values(event).onConflictDoNothing({ target: events.id }),
    db.delete(pendingPayments).where(eq(pendingPayments.transactionId, id)),
    webhook,
  ] as const;
}

/**
 * A PENDING transaction whose settlement outcome is unknown (sent, not seen on chain yet), in one batch: its hash,
 * when known, kept on the transaction so the tenant sees it, and its webhook deliveries. Returns whether the
 * transaction was still PENDING, and the deliveries written.
 */
export async function notePendingPayment(
  db: Db,
  id: string,
  txHash: string | undefined,
  webhook: WebhookStatement,
): Promise<{ pending: boolean; deliveries: { id: string }[] }> {
  const stillPending = and(eq(transactions.id, id), eq(transactions.status, "PENDING"));
  const [rows, deliveries] = await db.batch([
    txHash === undefined
      ? db.select({ id: transactions.id }).from(transactions).where(stillPending)
      : db.update(transactions).set({ txHash }).where(stillPending).returning({ id: transactions.id }),
    webhook,
  ]);
  return { pending: rows.length === 1, deliveries };
}

/** A transaction's status and hash (a replayed payment's answer depends on them). */
export async function findPaymentStatus(db: Db, id: string) {
  const [row] = await db
    .select({ status: transactions.status, txHash: transactions.txHash })
    .from(transactions)
    .where(eq(transactions.id, id));
  return row;
}

/**
 * PENDING gateway payments started before `startedBefore`, least recently checked first (never checked: by when
 * they started). A payment outlives its paywall: the transaction keeps the paywall's ids.
 */
export async function findPendingPayments(db: Db, startedBefore: Date, limit: number) {
  return db
    .select({ pending: pendingPayments, transaction: transactions })
    .from(pendingPayments)
    .innerJoin(transactions, eq(transactions.id, pendingPayments.transactionId))
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
