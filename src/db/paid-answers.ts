// The answers gateway payments bought (`paid_answers`): the claim written with a payment's start, and the statements
// the ledger's moves add to their own batches (src/core/ledger/ledger.ts), each guarded by the status the move leaves
// (passed from the ledger's move table), so an answer is stored, kept or deleted exactly when its transaction moves.
// Read by the resend path (src/gateway/pipeline/known.ts).
import { and, eq, gt, lte, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { type PaidAnswerRow, paidAnswers, type TransactionStatus, transactions } from "./schema.ts";

/** What a payment's start claims: the request it pays for, its credential, its retry key, how long it is kept. */
export type PaidAnswerClaim = Pick<PaidAnswerRow, "paymentKey" | "fingerprint" | "credential" | "ownerUntil" | "expiresAt"> & {
  /** What proves a later request comes from the buyer (src/gateway/paid-answer.ts `buyerProof`); none: never served again. */
  buyerProof?: string | null;
  /**
   * An expired row under the same retry key (an x402 `payment-identifier` used again after its answer's window) is
   * replaced rather than refused.
   */
  replaceExpiredKey?: boolean;
};

/** The answer a request stored for its payment: sealed (`null` when it was too large to keep), and when. */
export interface StoredAnswer {
  sealed: string | null;
  at: Date;
}

const statusIs = (id: string, status: SQL) =>
  sql`exists (select 1 from ${transactions} where ${transactions.id} = ${id} and ${status})`;
const statusEq = (id: string, status: TransactionStatus) => statusIs(id, sql`${transactions.status} = ${status}`);

/** The claim's statements, for the start's batch (after the transaction's insert, so a claim needs its payment). */
export function claimStatements(db: Db, transactionId: string, tenantId: string, claim: PaidAnswerClaim, now: Date) {
  const { replaceExpiredKey, ...row } = claim;
  const insert = db
    .insert(paidAnswers)
    .values({ ...row, transactionId, tenantId, createdAt: now })
    // The same payment again: its claim stands. Another payment under the same retry key: the unique index refuses
    // it and the whole start batch with it (see `startPayment`).
    .onConflictDoNothing({ target: paidAnswers.transactionId });
  if (!replaceExpiredKey || !row.paymentKey) return [insert] as const;
  return [
    db.delete(paidAnswers).where(and(eq(paidAnswers.paymentKey, row.paymentKey), lte(paidAnswers.expiresAt, now))),
    insert,
  ] as const;
}

/**
 * For `complete`'s batch: the request's answer stored (or, from the sweep, the stored one kept), servable from now on
 * until `expiresAt`, only if the transaction stands at `completed` (the move's `to`) once the batch's update ran.
 */
export function keepAnswerStatement(
  db: Db,
  transactionId: string,
  completed: TransactionStatus,
  expiresAt: Date,
  answer?: StoredAnswer,
) {
  return db
    .update(paidAnswers)
    .set(answer ? { answer: answer.sealed, answeredAt: answer.at, expiresAt } : { expiresAt })
    .where(and(eq(paidAnswers.transactionId, transactionId), statusEq(transactionId, completed)));
}

/**
 * Before the settlement is sent: the upstream's answer kept on the PENDING claim (its `answeredAt` left unset: the
 * request is still at work, copies keep waiting for it). Not a move: the status stays PENDING and the answer stays
 * unservable until `complete`. So a request that dies while settling leaves its answer for the sweep's COMPLETED.
 * Written only while the transaction stands at `pending`.
 */
export function keepAnswerBeforeSettling(db: Db, transactionId: string, pending: TransactionStatus, sealed: string | null) {
  return db
    .update(paidAnswers)
    .set({ answer: sealed })
    .where(and(eq(paidAnswers.transactionId, transactionId), statusEq(transactionId, pending)))
    .returning({ id: paidAnswers.transactionId });
}

/**
 * For `leaveUnknown`: the request's answer stored, unservable while the transaction stays PENDING; not once it stands
 * at `failed` (its answer is gone with the move to it).
 */
export function holdAnswerStatement(db: Db, transactionId: string, failed: TransactionStatus, answer: StoredAnswer) {
  return db
    .update(paidAnswers)
    .set({ answer: answer.sealed, answeredAt: answer.at })
    .where(and(eq(paidAnswers.transactionId, transactionId), statusIs(transactionId, sql`${transactions.status} <> ${failed}`)));
}

/**
 * For `fail`'s batch: the answer and its claim deleted, if the transaction stands at `failed` (the move's `to`) once
 * the batch's update ran.
 */
export function dropAnswerStatement(db: Db, transactionId: string, failed: TransactionStatus) {
  return db.delete(paidAnswers).where(and(eq(paidAnswers.transactionId, transactionId), statusEq(transactionId, failed)));
}

export interface KnownPayment {
  row: PaidAnswerRow;
  status: TransactionStatus;
  txHash: string | null;
  payer: string | null;
  network: string;
}

/**
 * The unexpired paid answer of a payment presented again, by its transaction id or its retry key (one indexed read
 * each way, in one statement), with its transaction's status. The row of `transactionId` wins when both match.
 */
export async function findKnownPayment(
  db: Db,
  keys: { transactionId?: string; paymentKey?: string },
  now: Date,
): Promise<KnownPayment | undefined> {
  const by = [
    keys.transactionId ? eq(paidAnswers.transactionId, keys.transactionId) : undefined,
    keys.paymentKey ? eq(paidAnswers.paymentKey, keys.paymentKey) : undefined,
  ].filter((c) => c !== undefined);
  if (by.length === 0) return undefined;
  const rows = await db
    .select({
      row: paidAnswers,
      status: transactions.status,
      txHash: transactions.txHash,
      payer: transactions.payerAddress,
      network: transactions.network,
    })
    .from(paidAnswers)
    .innerJoin(transactions, eq(transactions.id, paidAnswers.transactionId))
    .where(and(or(...by), gt(paidAnswers.expiresAt, now)));
  return rows.find((r) => r.row.transactionId === keys.transactionId) ?? rows[0];
}

/** Deletes paid answers past their window, `chunk` rows per statement (the hourly cleanup). Returns how many. */
export async function deleteExpiredPaidAnswers(db: Db, now: Date, chunk = 500): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await db.run(
      sql`DELETE FROM ${paidAnswers} WHERE rowid IN (SELECT rowid FROM ${paidAnswers} WHERE ${paidAnswers.expiresAt} <= ${now.getTime()} LIMIT ${chunk})`,
    );
    const changes = result.meta.changes ?? 0;
    deleted += changes;
    if (changes < chunk) return deleted;
  }
}
