// The ledger's moves over payments recorded in their Durable Objects (src/core/ledger/payment-object.ts) rather than
// in D1: the same names and arguments as src/core/ledger/ledger.ts but the first (the objects' namespace instead of
// `db`), the same rows, the same move table guarding every move, and no D1 statement on the caller's path: D1 gets
// the records from the object's alarm, as its read model (docs/gateway.md, "Payments recorded in their objects").
import { PAID_ANSWER_KEEP_SECONDS, PENDING_CLAIM_MS } from "../payments.ts";
import type { Outcome, PaymentRef, PaymentStart, StoredAnswer } from "./ledger.ts";
import { completeRows, failRows, PAYMENT_MOVES, startRows } from "./ledger.ts";
import type { KnownPayment, MoveRecord, PaymentObject } from "./payment-object.ts";

/** Where payments are recorded: the per-payment objects (the Worker's `PAYMENT_COORDINATOR` binding). */
export interface PaymentObjects {
  PAYMENT_COORDINATOR: DurableObjectNamespace<PaymentObject>;
}

const objectOf = (env: PaymentObjects, transactionId: string) => env.PAYMENT_COORDINATOR.getByName(transactionId);
/** The object of a retry key: which payment holds it (named apart from any transaction id). */
const keyObjectOf = (env: PaymentObjects, paymentKey: string) => env.PAYMENT_COORDINATOR.getByName(`key:${paymentKey}`);
/** Until when a COMPLETED payment's answer stays servable, from when it became so. */
const keptUntil = (at: Date) => new Date(at.getTime() + PAID_ANSWER_KEEP_SECONDS * 1000);
const move = (env: PaymentObjects, transactionId: string, name: Parameters<PaymentObject["move"]>[0], r: MoveRecord) =>
  objectOf(env, transactionId).move(name, r);

/**
 * `start`: PENDING with its REQUEST event (and the claim on its answer). `false` when the payment was already recorded,
 * or when its retry key belongs to another payment (nothing is recorded then).
 */
export async function startPayment(env: PaymentObjects, p: PaymentStart): Promise<boolean> {
  const [transaction, event] = startRows(p);
  const at = p.at ?? new Date();
  let answer: MoveRecord["answer"];
  if (p.claim) {
    const { replaceExpiredKey, ...claim } = p.claim;
    if (claim.paymentKey) {
      const key = keyObjectOf(env, claim.paymentKey);
      if (!(await key.claimKey(p.transactionId, claim.expiresAt, at, replaceExpiredKey ?? false))) return false;
    }
    answer = {
      buyerProof: null,
      answer: null,
      answeredAt: null,
      ...claim,
      transactionId: p.transactionId,
      tenantId: p.tenantId,
      createdAt: at,
    };
  }
  return move(env, p.transactionId, "start", { transaction, events: [event], answer, pending: p.pending });
}

/**
 * `complete`: COMPLETED with the transfer's hash and its SUCCESS event; the request's `answer` stored (from the sweep:
 * the one kept before), servable for `PAID_ANSWER_KEEP_SECONDS`. `false` if it was not PENDING.
 */
export function completePayment(
  env: PaymentObjects,
  p: PaymentRef,
  txHash: string,
  o: Outcome,
  answer?: StoredAnswer,
): Promise<boolean> {
  const [change, event] = completeRows(p, txHash, o);
  const expiresAt = keptUntil(answer?.at ?? o.at ?? new Date());
  const keep = answer ? { answer: answer.sealed, answeredAt: answer.at, expiresAt } : { expiresAt };
  return move(env, p.transactionId, "complete", { transaction: change, events: [event], answer: keep });
}

/** `fail`: FAILED with the reason and its ERROR event; its answer and claim gone. `false` if it was not PENDING. */
export function failPayment(env: PaymentObjects, p: PaymentRef, reason: string, o: Outcome): Promise<boolean> {
  const [change, event] = failRows(p, reason, o);
  return move(env, p.transactionId, "fail", { transaction: change, events: [event], answer: null });
}

/**
 * `leaveUnknown`: still PENDING, the settlement's hash kept when known; the request's `answer` stored, unservable
 * until `complete`. `false` if it was not PENDING.
 */
export function leavePaymentUnknown(
  env: PaymentObjects,
  p: PaymentRef,
  txHash: string | undefined,
  answer?: StoredAnswer,
): Promise<boolean> {
  return move(env, p.transactionId, "leaveUnknown", {
    transaction: txHash === undefined ? {} : { txHash },
    events: [],
    answer: answer ? { answer: answer.sealed, answeredAt: answer.at } : undefined,
  });
}

/** Not a move: the upstream's answer kept on the PENDING payment's claim before its settlement is sent. */
export function keepAnswerBeforeSettlement(env: PaymentObjects, p: PaymentRef, answer: StoredAnswer): Promise<boolean> {
  return objectOf(env, p.transactionId).keepAnswer(PAYMENT_MOVES.leaveUnknown.from, answer.sealed);
}

/**
 * The resend lookup: the unexpired paid answer of a payment presented again, by its transaction id or its retry key,
 * with where it stands, answered by the payment's object (and the key's), never by D1. The payment of
 * `transactionId` wins when both are known.
 */
export async function findKnownPayment(
  env: PaymentObjects,
  keys: { transactionId?: string; paymentKey?: string },
  now: Date,
): Promise<KnownPayment | undefined> {
  const byId = keys.transactionId ? await objectOf(env, keys.transactionId).known(now) : undefined;
  if (byId || !keys.paymentKey) return byId;
  const holder = await keyObjectOf(env, keys.paymentKey).keyHolder();
  return holder ? objectOf(env, holder).known(now) : undefined;
}

/**
 * Whether a payment presented again that no object knows may have been recorded in D1, by the D1 ledger, before the
 * gateway switched to its objects at `switchedAt` (the `PAYMENT_RECORDS_SINCE` var, ISO 8601; empty: nothing was
 * recorded in D1 before): only until `PENDING_CLAIM_MS` after the switch (no D1 claim or answer is kept longer), and
 * only for a credential that may have been accepted before the switch (`since`: the earliest it can have been;
 * unknown counts as before). A new payment made after the switch therefore makes no D1 read.
 */
export function mayBeRecordedInD1(switchedAt: string | undefined, since: Date | undefined, now: Date): boolean {
  const at = switchedAt ? Date.parse(switchedAt) : Number.NaN;
  if (!Number.isFinite(at) || now.getTime() >= at + PENDING_CLAIM_MS) return false;
  return since === undefined || since.getTime() < at;
}

/** Where a recorded payment stands, from its object (never D1), or `undefined` if never recorded. */
export async function paymentStatus(env: PaymentObjects, transactionId: string) {
  const row = await objectOf(env, transactionId).transaction();
  return row ? { status: row.status, txHash: row.txHash ?? null } : undefined;
}
