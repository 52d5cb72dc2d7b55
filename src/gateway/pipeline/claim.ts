import { paymentRecordIds } from "../../core/ledger/ids.ts";
import { networkTable } from "../../core/money/network-table.ts";
import { PENDING_CLAIM_MS } from "../../core/payments.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import { answerKnown, type KnownContext, outcomeUnknown, type Presentation } from "./known.ts";
import { go, type Outcome, refuse, type Step, stop, type VerifiedPayment } from "./method.ts";
import type { PaymentRef } from "./record.ts";

/** The shortest upstream call a payment may leave room for; less is refused before anything is recorded. */
const MIN_UPSTREAM_MS = 1_000;
/** Copies of a payment wait this much longer than its owner's own bound (its upstream call and settlement). */
const OWNER_SLACK_MS = 5_000;

/** A payment this request owns: recorded PENDING, with the time its upstream call may take. */
export interface Claim {
  ref: PaymentRef;
  upstreamTimeout: number;
}

/**
 * A verified payment claimed by this request:
 *
 * 1. budget: the upstream call must end in time to settle before the payment expires (an answer the buyer could not
 *    then pay for would be work done for free): too little time left is refused before anything happens;
 * 2. record: the ledger's `start` (PENDING + REQUEST, and the claim on its answer: the request it pays for, its
 *    credential, its retry key); the transaction id is the payment's, so this insert decides that a payment is used
 *    once, and the retry key's unique index that a retry key pays once. A copy that loses is answered as a resend
 *    (`answerCopy`): it waits for this payment's outcome and gets its answer.
 */
export async function claimPayment(
  k: KnownContext,
  target: PaymentTarget,
  payment: VerifiedPayment,
  p: Presentation,
  refusal: (reason: string) => Promise<Response>,
): Promise<Step<Claim>> {
  const { paywall, service } = target;
  const { env, request } = k.input;
  const budget = payment.expiresAt.getTime() - Date.now() - k.method.settleMarginMs;
  if (budget < Math.min(paywall.timeout, MIN_UPSTREAM_MS)) {
    return refuse(await refusal("The payment expires too soon for the upstream to answer and the payment to settle: pay again"));
  }
  const { protocol } = k.method;
  const { transactionId } = await paymentRecordIds(protocol, payment.network, payment.payer, payment.nonce);
  const ref: PaymentRef = {
    transactionId,
    tenantId: paywall.tenantId,
    paywallId: paywall.id,
    serviceId: service.id,
    protocol,
    network: payment.network,
    amount: payment.amount,
  };
  const upstreamTimeout = Math.min(paywall.timeout, budget);
  const now = Date.now();
  const started = await k.ledger.start({
    ...ref,
    currency: networkTable(env)[payment.network].token,
    payer: payment.payer,
    method: request.method,
    ...(k.input.via ? { via: k.input.via } : {}),
    pending: payment.pending,
    claim: {
      paymentKey: payment.paymentKey ?? null,
      fingerprint: p.fingerprint,
      credential: payment.credential,
      buyerProof: p.presented?.proof ?? null,
      ownerUntil: new Date(now + upstreamTimeout + k.method.settleMarginMs + OWNER_SLACK_MS),
      expiresAt: new Date(now + PENDING_CLAIM_MS),
      // An x402 `payment-identifier` may come back after its answer's window; an MPP challenge cannot (it expired).
      replaceExpiredKey: protocol === "x402",
    },
  });
  if (!started) return stop(await answerCopy(k, payment, ref, p, refusal));
  return go({ ref, upstreamTimeout });
}

/** A copy of a payment already recorded (the same payment, or another under the same retry key): its answer. */
async function answerCopy(
  k: KnownContext,
  payment: VerifiedPayment,
  { transactionId }: PaymentRef,
  p: Presentation,
  refusal: (reason: string) => Promise<Response>,
): Promise<Outcome> {
  const known = await k.ledger.known({ transactionId, paymentKey: payment.paymentKey });
  const answer = known && (await answerKnown(k, p, known, payment.payer));
  if (answer) return answer;
  const existing = await k.ledger.status(transactionId);
  if (existing?.status === "PENDING") return { kind: "error", error: outcomeUnknown(transactionId, existing.txHash, true) };
  return { kind: "refused", refusal: { by: "standard", answer: await refusal("This payment was already used") } };
}
