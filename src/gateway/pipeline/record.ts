import {
  completePayment,
  failPayment,
  keepAnswerBeforeSettlement,
  leavePaymentUnknown,
  type Outcome,
  type PaymentRef,
  type PaymentStart,
  paymentStatus,
  type StoredAnswer,
  startPayment,
} from "../../core/ledger/ledger.ts";
import * as recorded from "../../core/ledger/recorded.ts";
import { queueOutbox } from "../../core/webhooks/outbox.ts";
import { getDb } from "../../db/client.ts";
import { findKnownPayment, type KnownPayment } from "../../db/paid-answers.ts";
import { ownerFinished } from "../coordinator.ts";
import type { PresentedPayment } from "./method.ts";

// The pipeline's one door to the ledger: every move of a payment it makes, and every read of a payment it knows,
// goes through here. Below this file the ledger decides how: over the payments' Durable Objects when `PAYMENT_RECORDS`
// is "objects", the default (src/core/ledger/recorded.ts: the same moves, no D1 statement on the request path, D1 as
// their read model, written in batches through the payment-records queue), or over D1 when it is "d1"
// (src/core/ledger/ledger.ts, each move a D1 batch on the request path; docs/gateway.md, "Payments recorded in their
// objects").

export type { Outcome as UpstreamOutcome, PaymentRef } from "../../core/ledger/ledger.ts";
export type { KnownPayment } from "../../db/paid-answers.ts";

/** The ledger as one request's pipeline uses it: its webhook deliveries queued after the answer (`defer`). */
export function ledgerFor(env: Env, defer: (work: Promise<unknown>) => void): Ledger {
  return env.PAYMENT_RECORDS === "objects" ? objectLedger(env, defer) : d1Ledger(env, defer);
}

/**
 * The ledger over payments recorded in their objects: their webhook deliveries leave with their records. A payment
 * presented again that no object knows is looked for in D1 only where the D1 ledger may have recorded it before the
 * switch (`recorded.mayBeRecordedInD1`): it is answered from there as before.
 */
function objectLedger(env: Env, defer: (work: Promise<unknown>) => void): Ledger {
  // Payments whose outcome this request recorded in their object: the move itself woke the copies waiting there.
  const told = new Set<string>();
  const outcome = async (p: PaymentRef, moved: Promise<boolean>) => {
    const done = await moved;
    told.add(p.transactionId);
    return done;
  };
  const known = async (keys: PaymentKeys) => {
    const now = new Date();
    const found = await recorded.findKnownPayment(env, keys, now);
    if (found || !recorded.mayBeRecordedInD1(env.PAYMENT_RECORDS_SINCE, keys.since, now)) return found;
    return findKnownPayment(getDb(env.DB), keys, now);
  };
  return {
    start: (p) => recorded.startPayment(env, p),
    complete: (p, txHash, o, answer) => outcome(p, recorded.completePayment(env, p, txHash, o, answer)),
    fail: (p, reason, o) => outcome(p, recorded.failPayment(env, p, reason, o)),
    leaveUnknown: (p, txHash, answer) => outcome(p, recorded.leavePaymentUnknown(env, p, txHash, answer)),
    keepBeforeSettling: (p, answer) => recorded.keepAnswerBeforeSettlement(env, p, answer),
    status: (transactionId) => recorded.paymentStatus(env, transactionId),
    known,
    finished: (transactionId) => {
      if (!told.has(transactionId)) ownerFinished(env, defer, transactionId);
    },
  };
}

function d1Ledger(env: Env, defer: (work: Promise<unknown>) => void) {
  const db = getDb(env.DB);
  // The webhook deliveries each move records go to the queue after its batch, never delaying the buyer's answer.
  const outbox = queueOutbox(env, { waitUntil: defer });
  return {
    /** `start`: PENDING + REQUEST and the claim on its answer; `false` when the payment (or its retry key) is taken. */
    start: (p: PaymentStart) => startPayment(db, p),
    /** `complete`: the money moved; `answer` is what the buyer got, kept for a resend. */
    complete: (p: PaymentRef, txHash: string, o: Outcome, answer?: StoredAnswer) =>
      completePayment(db, p, txHash, o, answer, outbox),
    /** `fail`: nothing was charged. */
    fail: (p: PaymentRef, reason: string, o: Outcome) => failPayment(db, p, reason, o, outbox),
    /** `leaveUnknown`: the settlement's outcome is not known; the sweep reads it from the chain. */
    leaveUnknown: (p: PaymentRef, txHash: string | undefined, answer: StoredAnswer) =>
      leavePaymentUnknown(db, p, txHash, answer, outbox),
    /** The answer kept (unservable) before the settlement is sent; `false` when the payment is no longer PENDING. */
    keepBeforeSettling: (p: PaymentRef, answer: StoredAnswer) => keepAnswerBeforeSettlement(db, p, answer),
    status: (transactionId: string) => paymentStatus(db, transactionId),
    /** The unexpired answer of a payment the gateway knows, by its transaction id or its retry key. */
    known: (keys: PaymentKeys): Promise<KnownPayment | undefined> => findKnownPayment(db, keys, new Date()),
    /** The owner is done with its payment (its outcome recorded, or given up): the copies waiting read it now. */
    finished: (transactionId: string) => ownerFinished(env, defer, transactionId),
  };
}

export type Ledger = ReturnType<typeof d1Ledger>;

/** A payment presented again: its transaction id, its retry key, and since when it can have been accepted. */
type PaymentKeys = Pick<PresentedPayment, "transactionId" | "paymentKey" | "since">;
