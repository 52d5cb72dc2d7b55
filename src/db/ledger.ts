// The payment ledger's writes and reads: each move of a payment is one of these statements or batches, guarded by
// the state it moves from (src/core/ledger/ledger.ts owns the moves; nothing else writes a transaction's status).
import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client.ts";
import { isUniqueViolation } from "./errors.ts";
import type { NewEvent } from "./events.ts";
import { events, paidAnswers, pendingPayments, type TransactionRow, transactions } from "./schema.ts";
import type { NewTransaction } from "./transactions.ts";
import type { webhookFanOutStatement } from "./webhooks.ts";

export type PendingPayment = Pick<
  typeof pendingPayments.$inferInsert,
  "reference" | "validBefore" | "asset" | "payTo" | "settlement"
>;

/** Statements a move adds to its own batch (the paid answer's claim, store or delete: src/db/paid-answers.ts). */
export type MoveExtras = readonly BatchItem<"sqlite">[];

/**
 * A payment's start in one atomic batch: its PENDING transaction, its REQUEST event, what settles it from the chain
 * later (`pending_payments`), and `extras` (its paid answer's claim). All ids derive from the payment, so a replay
 * inserts none. Returns whether this call created the transaction: of two concurrent starts of one payment exactly
 * one gets `true`, and a fault between the writes leaves none. A unique index refusing one of `extras` (the claim of
 * a retry key another payment holds) refuses the whole start: `false`, nothing written.
 */
export async function insertPaymentStart(
  db: Db,
  transaction: NewTransaction,
  event: NewEvent,
  pending: PendingPayment,
  extras: MoveExtras = [],
): Promise<boolean> {
  try {
    const [inserted] = await db.batch([...paymentStartStatements(db, transaction, event, pending), ...extras]);
    return inserted.length === 1;
  } catch (err) {
    if (extras.length > 0 && isUniqueViolation(err)) return false;
    throw err;
  }
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

/**
 * A payment's outcome in one atomic batch: PENDING → COMPLETED or FAILED, its SUCCESS or ERROR event (one per
 * payment: the event id derives from it), its `pending_payments` row gone, and `extras` (its paid answer kept or
 * deleted, each guarded by the status this batch leaves) and `webhook` (the move's webhook deliveries). Returns whether
 * the transaction was still PENDING, and the deliveries written.
 */
export async function closePendingPayment(
  db: Db,
  id: string,
  change: PaymentClose,
  event: NewEvent,
  extras: MoveExtras = [],
  webhook?: WebhookStatement,
): Promise<MoveResult> {
  const results = await db.batch([...paymentCloseStatements(db, id, change, event, webhook), ...extras]);
  return { moved: results[0].length === 1, deliveries: webhook ? (results[3] as { id: string }[]) : [] };
}

/** The webhook statement a move adds to its batch (`webhookFanOutStatement`): it returns the deliveries it wrote. */
export type WebhookStatement = ReturnType<typeof webhookFanOutStatement>;

/** Whether a move happened, and the webhook deliveries its batch wrote. */
export interface MoveResult {
  moved: boolean;
  deliveries: { id: string }[];
}

export type PaymentClose = Pick<TransactionRow, "status" | "txHash" | "settledAt" | "failureReason">;

/**
 * The statements of a payment's outcome (see `closePendingPayment`), for a batch of one payment or of many; the
 * move's webhook deliveries fourth (`webhookFanOutStatement`: only if the move happened).
 */
export function paymentCloseStatements(db: Db, id: string, change: PaymentClose, event: NewEvent, webhook?: WebhookStatement) {
  return [
    db
      .update(transactions)
      .set(change)
      .where(and(eq(transactions.id, id), eq(transactions.status, "PENDING")))
      .returning({ id: transactions.id }),
    db.insert(events).values(event).onConflictDoNothing({ target: events.id }),
    db.delete(pendingPayments).where(eq(pendingPayments.transactionId, id)),
    ...(webhook ? [webhook] : []),
  ] as const;
}

/**
 * A PENDING transaction whose settlement outcome is unknown (sent, not seen on chain yet): its hash, when known,
 * is kept on the transaction so the tenant sees it, in one batch with `extras` (its paid answer held) and `webhook`
 * (its `transaction.pending` deliveries). Returns whether the transaction was still PENDING, and the deliveries.
 */
export async function notePendingPaymentHash(
  db: Db,
  id: string,
  txHash: string | undefined,
  extras: MoveExtras = [],
  webhook?: WebhookStatement,
): Promise<MoveResult> {
  const still = and(eq(transactions.id, id), eq(transactions.status, "PENDING"));
  const statement =
    txHash === undefined
      ? db.select({ id: transactions.id }).from(transactions).where(still)
      : db.update(transactions).set({ txHash }).where(still).returning({ id: transactions.id });
  const results = await db.batch([statement, ...(webhook ? [webhook] : []), ...extras]);
  return { moved: results[0].length === 1, deliveries: webhook ? (results[1] as { id: string }[]) : [] };
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
 * they started), each with where its request left it: `answerKept` (the upstream's answer is kept for it) and
 * `requestFinished` (its request recorded an outcome, e.g. the settlement's unknown one). A payment outlives its
 * paywall: the transaction keeps the paywall's ids.
 */
export async function findPendingPayments(db: Db, startedBefore: Date, limit: number) {
  return db
    .select({
      pending: pendingPayments,
      transaction: transactions,
      answerKept: sql<number>`${paidAnswers.answer} is not null`.mapWith(Boolean),
      requestFinished: sql<number>`${paidAnswers.answeredAt} is not null`.mapWith(Boolean),
    })
    .from(pendingPayments)
    .innerJoin(transactions, eq(transactions.id, pendingPayments.transactionId))
    .leftJoin(paidAnswers, eq(paidAnswers.transactionId, pendingPayments.transactionId))
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
