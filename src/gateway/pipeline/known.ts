import { ApiError } from "../../core/http/errors.ts";
import { waitForOwner } from "../coordinator.ts";
import { openAnswer, SETTLEMENT_REFERENCE_HEADER, TRANSACTION_ID_HEADER } from "../paid-answer.ts";
import type { Outcome, PaymentInput, PaymentMethod, PresentedPayment } from "./method.ts";
import type { KnownPayment, Ledger } from "./record.ts";

// Exactly once, from the buyer's side: a payment presented again gets the answer it bought, never a second charge,
// never a refusal of a payment that went through. The answer is the one the ledger stored with the payment's move
// (src/db/paid-answers.ts); this module finds it, checks the request proves it comes from the buyer (the chain shows
// a settled x402 credential to anyone), the credential is the payer's and the request the same, and answers it, or
// waits for the request that owns a payment still in flight. These rules are written here once, for every method.

/** The longest a copy waits for the request that owns its payment (which may take its upstream's and settlement's time). */
export const MAX_OWNER_WAIT_MS = 60_000;

const sameAddress = (a: string | null, b: string | null) => !!a && !!b && a.toLowerCase() === b.toLowerCase();

/** `502 PAYMENT_OUTCOME_UNKNOWN`: the payment may have moved money; its transaction stays PENDING for the sweep. */
export const outcomeUnknown = (transactionId: string, txHash: string | null | undefined, replay: boolean) =>
  new ApiError(
    "PAYMENT_OUTCOME_UNKNOWN",
    (replay
      ? "This payment is already being processed or its settlement's outcome is not known yet"
      : "The payment was sent for settlement but its outcome is not known yet") +
      ": do not pay again before checking this transaction on chain; send the same payment again later to get its answer",
    { details: { transactionId, ...(txHash ? { txHash } : {}) }, headers: { [TRANSACTION_ID_HEADER]: transactionId } },
  );

/** What a payment was presented as, for answering it as a copy of a payment already recorded. */
export interface Presentation {
  /** The credential decoded locally (`undefined` when it could not be). */
  presented: PresentedPayment | undefined;
  /** The request's fingerprint (src/gateway/paid-answer.ts `requestFingerprint`). */
  fingerprint: string;
}

/** Where a known payment is answered from: the request's input, its method, and the ledger. */
export interface KnownContext {
  input: PaymentInput;
  method: PaymentMethod;
  ledger: Ledger;
}

/**
 * The answer to a credential whose payment the gateway already knows (one D1 read), or `undefined` when it knows none
 * (or the credential is not provably the payer's): the caller then verifies it as a new payment.
 */
export async function answerResend(k: KnownContext, p: Presentation): Promise<Outcome | undefined> {
  if (!p.presented) return undefined;
  const known = await k.ledger.known(p.presented);
  return known && answerKnown(k, p, known);
}

/**
 * The answer to a known payment presented again:
 *
 * - the request must prove it comes from the buyer: the same `buyerProof` (what only the buyer sent with the payment,
 *   never on chain: its x402 `payment-identifier` or challenge nonce, its MPP challenge id, its `Authorization`);
 *   and the credential must be the payer's: the same credential (by its digest), or, under the same retry key, a new
 *   one the payer signed (`verifiedPayer`: already verified by the standard; else `signedBy`, checked locally); and a
 *   payment made under a retry key is answered only to credentials carrying it. Not proven → `undefined`: the
 *   credential is then treated as any the gateway does not know, so nothing tells a party that has not proven it is
 *   the buyer whether the payment exists or what it was for;
 * - for another request (route, method, query or body) → `409 CONFLICT`, counted as a refused attempt;
 * - otherwise its state decides (`answerByState`).
 */
export async function answerKnown(
  k: KnownContext,
  { presented, fingerprint }: Presentation,
  known: KnownPayment,
  verifiedPayer?: string,
): Promise<Outcome | undefined> {
  const { row } = known;
  // An x402 authorization is public on chain once settled; what proves the buyer is not.
  const proven = !!presented?.proof && presented.proof === row.buyerProof;
  if (!proven) return undefined;
  const keyed = !row.paymentKey || presented.paymentKey === row.paymentKey;
  const authentic = verifiedPayer
    ? sameAddress(verifiedPayer, known.payer)
    : keyed && (presented.credential === row.credential || (!!known.payer && (await presented.signedBy(known.payer))));
  if (!authentic) {
    if (!verifiedPayer) return undefined;
    return conflict("key-taken", "This payment's retry key (its challenge) was paid by another payment");
  }
  if (row.fingerprint !== fingerprint) {
    return conflict(
      "other-request",
      "This payment was made for another request (another route, method, query or body); it pays for that one only",
    );
  }
  return answerByState(k, known);
}

/**
 * - COMPLETED → the stored answer: its status, headers (the settlement's included) and body, exactly as first sent;
 *   not kept (over the size limit) → `409 CONFLICT` with `details.reason: "answer-not-kept"`;
 * - PENDING with its owner finished (the settlement's outcome unknown) → `502 PAYMENT_OUTCOME_UNKNOWN`;
 * - PENDING with its owner still at work → waits for it (bounded), then answers as above;
 * - FAILED (nothing charged, its answer deleted with the move) → `undefined`: the standard refuses it as used.
 */
async function answerByState(k: KnownContext, known: KnownPayment): Promise<Outcome | undefined> {
  const { row } = known;
  let current: KnownPayment | undefined = known;
  if (current.status === "PENDING" && current.row.answeredAt === null) {
    const waitMs = Math.min(current.row.ownerUntil.getTime() - Date.now(), MAX_OWNER_WAIT_MS);
    await waitForOwner(k.input.env, row.transactionId, waitMs);
    current = await k.ledger.known({ transactionId: row.transactionId });
    // Its owner ended it FAILED (nothing charged, nothing kept): the standard's refusal, as for any used payment.
    if (!current) return undefined;
  }
  if (current.status === "PENDING") return { kind: "error", error: outcomeUnknown(row.transactionId, current.txHash, true) };
  if (current.status !== "COMPLETED") return undefined;
  if (current.row.answer === null) {
    return conflict(
      "answer-not-kept",
      "This payment completed, but its answer was not kept (larger than the gateway keeps, or not recorded): it cannot be sent again",
      { transactionId: row.transactionId, txHash: current.txHash },
    );
  }
  return { kind: "answer", response: await served(k, current) };
}

/** A stored answer, as first sent; an answer stored before its settlement was known gets the settlement's headers. */
async function served(k: KnownContext, known: KnownPayment): Promise<Response> {
  const { row, txHash } = known;
  const answer = await openAnswer(k.input.env, row.tenantId, row.transactionId, row.answer as string);
  if (txHash && !answer.headers.has(SETTLEMENT_REFERENCE_HEADER)) {
    for (const [name, value] of Object.entries(await k.method.receiptHeaders(k.input.env, txHash, known))) {
      answer.headers.set(name, value);
    }
    answer.headers.set(SETTLEMENT_REFERENCE_HEADER, txHash);
  }
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * `409 CONFLICT` to a request proven to come from the payment's buyer. Only the payment's own answer that cannot be
 * sent again (`answer-not-kept`) names the transaction: a payment presented for another request does not.
 */
function conflict(reason: string, message: string, paid?: { transactionId: string; txHash: string | null }): Outcome {
  const error = new ApiError("CONFLICT", message, {
    details: { reason, ...(paid ? { transactionId: paid.transactionId, ...(paid.txHash ? { txHash: paid.txHash } : {}) } : {}) },
    ...(paid ? { headers: { [TRANSACTION_ID_HEADER]: paid.transactionId } } : {}),
  });
  return { kind: "refused", refusal: { by: "conflict", error } };
}
