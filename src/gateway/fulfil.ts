import type { Context } from "hono";
import { ApiError } from "../core/http/errors.ts";
import { renderError } from "../core/http/render.ts";
import { paymentRecordIds } from "../core/ledger/ids.ts";
import {
  completePayment,
  failPayment,
  keepAnswerBeforeSettlement,
  leavePaymentUnknown,
  type Outcome,
  type PaymentRef,
  type PendingPayment,
  paymentStatus,
  startPayment,
} from "../core/ledger/ledger.ts";
import { networkTable } from "../core/money/network-table.ts";
import type { NetworkId } from "../core/money/networks.ts";
import { queueOutbox } from "../core/webhooks/outbox.ts";
import { getDb } from "../db/client.ts";
import type { PaymentTarget } from "../db/gateway.ts";
import { findKnownPayment } from "../db/paid-answers.ts";
import { answerCacheKey, CACHE_STATUS_HEADER, cachedAnswer, cacheRulesFor, isStorable, storeAnswer } from "./answer-cache.ts";
import type { ChainOutcome } from "./chain-outcome.ts";
import { ownerFinished } from "./coordinator.ts";
import type { GatewayEnv } from "./env.ts";
import { type AnswerParts, SETTLEMENT_REFERENCE_HEADER, sealAnswer, TRANSACTION_ID_HEADER } from "./paid-answer.ts";
import { PaymentRefusal } from "./refusals.ts";
import { answerKnown, outcomeUnknown, type PresentedPayment } from "./resend.ts";
import { issueSignedUrl } from "./signed-url.ts";
import { buyerBody } from "./target.ts";
import { callUpstream } from "./upstream/call.ts";
import { buyerResponseHeaders, type UpstreamParts } from "./upstream/request.ts";

type Ctx = Context<GatewayEnv>;

/** The shortest upstream call a payment may leave room for; less is refused before anything is recorded. */
const MIN_UPSTREAM_MS = 1_000;
/** Copies of a payment wait this much longer than its owner's own bound (its upstream call and settlement). */
const OWNER_SLACK_MS = 5_000;
/**
 * How long a payment's claim on its answer is kept while its payment is PENDING (the sweep settles it within minutes,
 * or an hour for one the chain cannot tell): once COMPLETED, its answer is kept `PAID_ANSWER_KEEP_SECONDS` from then.
 */
const PENDING_CLAIM_MS = 24 * 60 * 60 * 1000;

/**
 * How a settlement ended: the money moved (`settled`, with the headers the standard adds to the answer), it did not
 * (`refused`, with the standard's answer), or nobody can tell yet (`unknown`: sent, then its answer was lost, and
 * the chain does not show it yet; `txHash` when the transaction's hash is known).
 */
export type Settlement =
  | { kind: "settled"; txHash: string; headers: Record<string, string> }
  | { kind: "refused"; reason: string; response: Response }
  | { kind: "unknown"; reason: string; txHash?: string };

/** A verified payment, protocol by protocol: who paid what, how to move the money, and how to refuse it. */
export interface VerifiedPayment {
  protocol: "x402" | "mpp";
  network: NetworkId;
  payer: string;
  /** What makes the payment unique (x402: the EIP-3009 nonce; MPP: the challenge id). */
  nonce: string;
  /** The retry key it may be presented again under with a new credential (x402 `payment-identifier`; MPP challenge id). */
  paymentKey?: string;
  /** What identifies the credential itself (see `PresentedPayment.credential`). */
  credential: string;
  /** Integer micro-units of the token. */
  amount: string;
  /**
   * Past this instant the money can no longer be moved (x402: the authorization's `validBefore`; MPP: the earlier of
   * the challenge's expiry and the transaction's `validBefore`).
   */
  expiresAt: Date;
  /** Kept free before `expiresAt` for `settle` to finish: the upstream call gets what remains. */
  settleMarginMs: number;
  /** What settles the payment from the chain if this request cannot (stored with the PENDING transaction). */
  pending: PendingPayment;
  /** Moves the money, now; when the outcome of that is unknown, asks the chain. */
  settle(): Promise<Settlement>;
  /** The standard's refusal of this payment (already used, or expiring before the upstream could answer). */
  refuse(reason: string): Promise<Response>;
}

/** A settlement whose answer was lost, settled from the chain: `refuse` gives the standard's refusal. */
export async function settlementFromChain(
  outcome: ChainOutcome,
  settled: (txHash: string) => Promise<Record<string, string>>,
  refuse: (reason: string) => Promise<Response> | Response,
  txHash?: string,
): Promise<Settlement> {
  if (outcome.status === "COMPLETED") return { kind: "settled", txHash: outcome.txHash, headers: await settled(outcome.txHash) };
  if (outcome.status === "FAILED") {
    const reason = `settlement failed: ${outcome.reason}`;
    return { kind: "refused", reason, response: await refuse(reason) };
  }
  return { kind: "unknown", reason: `settlement outcome unknown: ${outcome.reason}`, ...(txHash ? { txHash } : {}) };
}

/** What a payment was presented as, for answering it as a copy of a payment already recorded. */
export interface PaymentRequest {
  /** The credential decoded locally (`undefined` when it could not be). */
  presented: PresentedPayment | undefined;
  /** The request's fingerprint (src/gateway/paid-answer.ts `requestFingerprint`). */
  fingerprint: string;
}

/**
 * A verified payment from here on, the same for both standards, in phases:
 *
 * 1. budget: the upstream call must end in time to settle before the payment expires (an answer the buyer could not
 *    then pay for would be work done for free): too little time left is refused before anything happens;
 * 2. record: the ledger's `start` (PENDING + REQUEST, and the claim on its answer: the request it pays for, its
 *    credential, its retry key); the transaction id is the payment's, so this insert decides that a payment is used
 *    once, and the retry key's unique index that a retry key pays once. A copy that loses is answered as a resend
 *    (src/gateway/resend.ts): it waits for this payment's outcome and gets its answer;
 * 3. forward, settle, close: see `forwardAndSettle`, run under `waitUntil` so a buyer who disconnects cancels
 *    neither the upstream call nor the settlement nor the outcome's record (Workers give such work 30 s after the
 *    disconnect; past that, the sweep settles the PENDING transaction from the chain).
 */
export async function fulfilPayment(
  c: Ctx,
  target: PaymentTarget,
  parts: UpstreamParts,
  payment: VerifiedPayment,
  request: PaymentRequest,
): Promise<Response> {
  const { paywall, service } = target;
  const budget = payment.expiresAt.getTime() - Date.now() - payment.settleMarginMs;
  if (budget < Math.min(paywall.timeout, MIN_UPSTREAM_MS)) {
    throw new PaymentRefusal(
      await payment.refuse("The payment expires too soon for the upstream to answer and the payment to settle: pay again"),
    );
  }
  const db = getDb(c.env.DB);
  const { transactionId } = await paymentRecordIds(payment.protocol, payment.network, payment.payer, payment.nonce);
  const ref: PaymentRef = {
    transactionId,
    tenantId: paywall.tenantId,
    paywallId: paywall.id,
    serviceId: service.id,
    protocol: payment.protocol,
    network: payment.network,
    amount: payment.amount,
  };
  const upstreamTimeout = Math.min(paywall.timeout, budget);
  const now = Date.now();
  const started = await startPayment(db, {
    ...ref,
    currency: networkTable(c.env)[payment.network].token,
    payer: payment.payer,
    method: c.req.method,
    pending: payment.pending,
    claim: {
      paymentKey: payment.paymentKey ?? null,
      fingerprint: request.fingerprint,
      credential: payment.credential,
      buyerProof: request.presented?.proof ?? null,
      ownerUntil: new Date(now + upstreamTimeout + payment.settleMarginMs + OWNER_SLACK_MS),
      expiresAt: new Date(now + PENDING_CLAIM_MS),
      // An x402 `payment-identifier` may come back after its answer's window; an MPP challenge cannot (it expired).
      replaceExpiredKey: payment.protocol === "x402",
    },
  });
  if (!started) {
    // A copy of a payment already recorded (the same payment, or another under the same retry key): its answer.
    const known = await findKnownPayment(db, { transactionId, paymentKey: payment.paymentKey }, new Date());
    const answer = known && (await answerKnown(c, request.presented, known, request.fingerprint, payment.payer));
    if (answer) return answer;
    const existing = await paymentStatus(db, transactionId);
    if (existing?.status === "PENDING") throw outcomeUnknown(transactionId, existing.txHash, true);
    throw new PaymentRefusal(await payment.refuse("This payment was already used"));
  }
  const work = forwardAndSettle(c, target, parts, payment, ref, upstreamTimeout).finally(() => ownerFinished(c, transactionId));
  c.executionCtx.waitUntil(work.catch(() => {}));
  return work;
}

/**
 * The part of a payment that must finish once it is recorded PENDING: SIGNED_URL settles and hands out a single-use
 * URL; PROXY forwards, and settles only when the upstream answered below 400. Every path ends in one ledger move:
 * `complete` (with the buyer's answer, kept for a resend), `fail`, or `leaveUnknown` when the settlement's outcome is
 * unknown (answered 502, never a new 402: the buyer may have paid; the upstream's answer is kept unservable, for the
 * buyer's resend once the sweep finds the payment COMPLETED). Whatever throws on the way, the payment does not stay
 * PENDING: it ends FAILED, or COMPLETED if the money already moved. Every answer names the transaction
 * (`Payment-Transaction-Id`); a paid one also its settlement (`Payment-Reference`, the transfer's hash).
 */
async function forwardAndSettle(
  c: Ctx,
  target: PaymentTarget,
  parts: UpstreamParts,
  payment: VerifiedPayment,
  ref: PaymentRef,
  upstreamTimeout: number,
): Promise<Response> {
  const db = getDb(c.env.DB);
  // The webhook deliveries each move records go to the queue after its batch, never delaying the buyer's answer.
  const outbox = queueOutbox(c.env, c.executionCtx);
  let settlement: Settlement | undefined;
  let upstream: Outcome = { statusCode: 200, responseTime: null };

  const seal = (answer: AnswerParts) => sealAnswer(c.env, ref.tenantId, ref.transactionId, answer);
  const named = (res: Response) => {
    res.headers.set(TRANSACTION_ID_HEADER, ref.transactionId);
    return res;
  };

  /**
   * The settlement's outcome, recorded with the buyer's answer: `paid(headers)` is that answer once the settlement's
   * headers are known (the money moved), stored with the `complete` move; else the buyer's answer is the standard's
   * refusal (`fail`), or 502 (`leaveUnknown`, with `unpaid`, the answer the buyer would get once it is COMPLETED).
   */
  const close = async (
    s: Settlement,
    paid: (headers: Record<string, string>) => Promise<Response>,
    unpaid?: AnswerParts,
  ): Promise<Response> => {
    if (s.kind === "settled") {
      const res = named(await paid({ ...s.headers, [SETTLEMENT_REFERENCE_HEADER]: s.txHash }));
      const body = await res.clone().arrayBuffer();
      await completePayment(db, ref, s.txHash, upstream, await seal({ status: res.status, headers: res.headers, body }), outbox);
      return res;
    }
    if (s.kind === "refused") {
      await failPayment(db, ref, s.reason, upstream, outbox);
      return named(s.response);
    }
    await leavePaymentUnknown(db, ref, s.txHash, unpaid ? await seal(unpaid) : { sealed: null, at: new Date() }, outbox);
    console.warn(JSON.stringify({ gateway: "settlement-unknown", transactionId: ref.transactionId, reason: s.reason }));
    return renderError(outcomeUnknown(ref.transactionId, s.txHash, false), c);
  };

  /**
   * The buyer's answer kept (sealed, unservable) before anything irreversible is sent: a crash from here on leaves
   * either nothing charged, or a charge whose answer the sweep makes servable with its COMPLETED record. A payment no
   * longer PENDING (the sweep settled it meanwhile) is not settled again.
   */
  const keepBeforeSettling = async (answer: AnswerParts) => {
    if (!(await keepAnswerBeforeSettlement(db, ref, await seal(answer)))) throw new Error("the payment is no longer PENDING");
  };

  try {
    if (target.paywall.fulfillmentMode === "SIGNED_URL") {
      settlement = await payment.settle();
      return await close(settlement, (headers) => issueSignedUrl(c, target, ref.transactionId, headers));
    }

    // The edge cache (answer-cache.ts): a fresh answer to the same request stands in for the upstream call; the
    // payment is settled all the same, and the answer is served only once it is.
    const rules = cacheRulesFor(target);
    const cacheKey = rules && (await answerCacheKey(target, rules, c.req.raw, await buyerBody(c)));
    const hit = rules && cacheKey ? await cachedAnswer(cacheKey, rules) : null;
    if (hit) {
      upstream = { statusCode: hit.answer.status, responseTime: null, cache: "hit" };
      const headers = new Headers(hit.answer.headers);
      headers.set(TRANSACTION_ID_HEADER, ref.transactionId);
      headers.set(CACHE_STATUS_HEADER, "HIT");
      headers.set("Age", String(hit.age));
      await keepBeforeSettling({ status: hit.answer.status, headers, body: hit.answer.body });
      settlement = await payment.settle();
      return await close(
        settlement,
        async (settled) => {
          for (const [name, value] of Object.entries(settled)) headers.set(name, value);
          return new Response(hit.answer.body, { status: hit.answer.status, headers });
        },
        { status: hit.answer.status, headers, body: hit.answer.body },
      );
    }

    const outcome = await callUpstream(c.req.method, parts, upstreamTimeout);
    if (outcome.kind !== "answered") {
      const timedOut = outcome.kind === "timeout";
      const reason = timedOut ? `upstream timed out after ${upstreamTimeout} ms` : "upstream unreachable";
      await failPayment(db, ref, reason, { statusCode: timedOut ? 504 : 502, responseTime: outcome.ms }, outbox);
      c.set("errorCode", timedOut ? "UPSTREAM_TIMEOUT" : "UPSTREAM_UNREACHABLE");
      const error = timedOut
        ? new ApiError("GATEWAY_TIMEOUT", "The upstream did not answer in time; the payment was not charged")
        : new ApiError("BAD_GATEWAY", "The upstream could not be reached; the payment was not charged");
      return named(renderError(error, c));
    }
    upstream = { statusCode: outcome.status, responseTime: outcome.ms, ...(rules ? { cache: "miss" as const } : {}) };
    const headers = buyerResponseHeaders(outcome.headers);
    // What other buyers may be served: the upstream's answer as any buyer gets it, before this payment's own headers.
    const shared =
      rules && cacheKey && isStorable(rules, outcome) ? { status: outcome.status, headers: new Headers(headers) } : null;
    headers.set(TRANSACTION_ID_HEADER, ref.transactionId);
    if (rules) headers.set(CACHE_STATUS_HEADER, "MISS");
    if (outcome.status >= 400) {
      await failPayment(db, ref, `upstream answered ${outcome.status}`, upstream, outbox);
      if (outcome.status >= 500) c.set("errorCode", "UPSTREAM_ERROR");
      return new Response(outcome.body, { status: outcome.status, headers });
    }

    await keepBeforeSettling({ status: outcome.status, headers, body: outcome.body });
    settlement = await payment.settle();
    return await close(
      settlement,
      async (settled) => {
        for (const [name, value] of Object.entries(settled)) headers.set(name, value);
        // Stored once its payment settled, after the buyer's answer (waitUntil).
        if (shared && rules && cacheKey) {
          c.executionCtx.waitUntil(storeAnswer(cacheKey, rules, { ...shared, body: outcome.body }));
        }
        return new Response(outcome.body, { status: outcome.status, headers });
      },
      { status: outcome.status, headers, body: outcome.body },
    );
  } catch (err) {
    // Not closed yet: the money moved → COMPLETED (one more try); unknown → stays PENDING; else nothing moved → FAILED.
    // A move that already happened is a no-op (each is guarded by PENDING).
    if (settlement?.kind === "settled")
      await completePayment(db, ref, settlement.txHash, upstream, undefined, outbox).catch(() => {});
    else if (settlement?.kind !== "unknown") {
      await failPayment(db, ref, "the request failed inside the gateway", { statusCode: 500, responseTime: null }, outbox).catch(
        () => {},
      );
    }
    throw err;
  }
}
