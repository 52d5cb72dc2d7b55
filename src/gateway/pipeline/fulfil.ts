import type { PaymentTarget } from "../../db/gateway.ts";
import { storeAnswer } from "../answer-cache.ts";
import { type AnswerParts, SETTLEMENT_REFERENCE_HEADER, sealAnswer, TRANSACTION_ID_HEADER } from "../paid-answer.ts";
import { issueSignedUrl } from "../signed-url.ts";
import type { UpstreamParts } from "../upstream/request.ts";
import type { Claim } from "./claim.ts";
import { type Forwarded, forward } from "./forward.ts";
import { type KnownContext, outcomeUnknown } from "./known.ts";
import type { Outcome, Settlement } from "./method.ts";
import type { PaymentRef } from "./record.ts";

/** A phase's value, or what it threw (the unexpected: a database that failed, a bug). */
type Done<T> = { ok: true; value: T } | { ok: false; thrown: unknown };

async function attempt<T>(work: () => Promise<T>): Promise<Done<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (thrown) {
    return { ok: false, thrown };
  }
}

/**
 * The part of a claimed payment that must finish once it is recorded PENDING, run under `defer` so a buyer who
 * disconnects cancels neither the upstream call nor the settlement nor the outcome's record (Workers give such work
 * 30 s after the disconnect; past that, the sweep settles the PENDING transaction from the chain). Copies waiting on
 * the payment's coordinator are woken once it ends.
 */
export function fulfil(
  k: KnownContext,
  target: PaymentTarget,
  parts: UpstreamParts,
  claim: Claim,
  settle: () => Promise<Settlement>,
): Promise<Outcome> {
  const { defer } = k.input;
  const work = forwardAndSettle(k, target, parts, claim, settle).finally(() => k.ledger.finished(claim.ref.transactionId));
  defer(work.catch(() => {}));
  return work;
}

/**
 * forward → settle → record: SIGNED_URL settles and hands out a single-use URL; PROXY forwards, and settles only when
 * the upstream answered below 400. Every path ends in one ledger move (`record`). Whatever throws on the way, the
 * payment does not stay PENDING (`abandoned`). Every answer names the transaction (`Payment-Transaction-Id`); a paid
 * one also its settlement (`Payment-Reference`, the transfer's hash).
 */
async function forwardAndSettle(
  k: KnownContext,
  target: PaymentTarget,
  parts: UpstreamParts,
  { ref, upstreamTimeout }: Claim,
  settle: () => Promise<Settlement>,
): Promise<Outcome> {
  const sent = await attempt(() => forwardAndKeep(k, target, parts, ref, upstreamTimeout));
  if (!sent.ok) return abandoned(k, ref, undefined, sent.thrown);
  const forwarded = sent.value;
  if (forwarded.kind === "unpaid") return forwarded.outcome;
  const settled = await attempt(settle);
  if (!settled.ok) return abandoned(k, ref, undefined, settled.thrown);
  const recorded = await attempt(() => record(k, target, ref, settled.value, forwarded));
  if (!recorded.ok) return abandoned(k, ref, settled.value, recorded.thrown, forwarded);
  return recorded.value;
}

/**
 * Forwarded, and what ends unpaid recorded `fail`. An answer to settle for is kept (sealed, unservable) before
 * anything irreversible is sent: a crash from here on leaves either nothing charged, or a charge whose answer the sweep
 * makes servable with its COMPLETED record. A payment no longer PENDING (the sweep settled it meanwhile) is not
 * settled again.
 */
async function forwardAndKeep(
  k: KnownContext,
  target: PaymentTarget,
  parts: UpstreamParts,
  ref: PaymentRef,
  upstreamTimeout: number,
): Promise<Forwarded> {
  const forwarded = await forward(k.input, target, parts, ref.transactionId, upstreamTimeout);
  if (forwarded.kind === "unpaid") await k.ledger.fail(ref, forwarded.reason, forwarded.upstream);
  if (forwarded.kind === "answer") {
    const kept = await k.ledger.keepBeforeSettling(ref, await seal(k, ref, forwarded.answer));
    if (!kept) throw new Error("the payment is no longer PENDING");
  }
  return forwarded;
}

/**
 * The settlement's outcome, recorded with the buyer's answer: settled → the paid answer (with the settlement's
 * headers), stored with the `complete` move; refused → the standard's refusal (`fail`); unknown → 502
 * (`leaveUnknown`, with the answer the buyer would get once it is COMPLETED), never a new 402: the buyer may have paid.
 */
async function record(
  k: KnownContext,
  target: PaymentTarget,
  ref: PaymentRef,
  s: Settlement,
  forwarded: Exclude<Forwarded, { kind: "unpaid" }>,
): Promise<Outcome> {
  if (s.kind === "settled") {
    const headers = { ...s.headers, [SETTLEMENT_REFERENCE_HEADER]: s.txHash };
    const res = named(await paidAnswer(k, target, ref, forwarded, headers), ref);
    const body = await res.clone().arrayBuffer();
    await k.ledger.complete(
      ref,
      s.txHash,
      forwarded.upstream,
      await seal(k, ref, { status: res.status, headers: res.headers, body }),
    );
    return { kind: "answer", response: res };
  }
  if (s.kind === "refused") {
    await k.ledger.fail(ref, s.reason, forwarded.upstream);
    return { kind: "answer", response: named(s.response, ref) };
  }
  const unpaid = forwarded.kind === "answer" ? await seal(k, ref, forwarded.answer) : { sealed: null, at: new Date() };
  await k.ledger.leaveUnknown(ref, s.txHash, unpaid);
  console.warn(JSON.stringify({ gateway: "settlement-unknown", transactionId: ref.transactionId, reason: s.reason }));
  return { kind: "error", error: outcomeUnknown(ref.transactionId, s.txHash, false) };
}

/** The buyer's answer to a settled payment: its single-use URL, or the answer with the settlement's headers. */
async function paidAnswer(
  k: KnownContext,
  target: PaymentTarget,
  ref: PaymentRef,
  forwarded: Exclude<Forwarded, { kind: "unpaid" }>,
  settled: Record<string, string>,
): Promise<Response> {
  if (forwarded.kind === "signed-url") return issueSignedUrl(k.input.env, target, ref.transactionId, settled);
  const { answer, shared } = forwarded;
  for (const [name, value] of Object.entries(settled)) answer.headers.set(name, value);
  // Stored once its payment settled, after the buyer's answer.
  if (shared) k.input.defer(storeAnswer(shared.key, shared.rules, shared.answer));
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * A phase threw before the payment's outcome was recorded: the money moved → COMPLETED (one more try); unknown →
 * it stays PENDING; else nothing moved → FAILED. A move that already happened is a no-op (each is guarded by
 * PENDING). Then the error goes on, to the transport's error handler.
 */
async function abandoned(
  k: KnownContext,
  ref: PaymentRef,
  settlement: Settlement | undefined,
  thrown: unknown,
  forwarded?: Exclude<Forwarded, { kind: "unpaid" }>,
): Promise<never> {
  if (settlement?.kind === "settled") {
    const upstream = forwarded?.upstream ?? { statusCode: 200, responseTime: null };
    await k.ledger.complete(ref, settlement.txHash, upstream).catch(() => {});
  } else if (settlement?.kind !== "unknown") {
    await k.ledger.fail(ref, "the request failed inside the gateway", { statusCode: 500, responseTime: null }).catch(() => {});
  }
  throw thrown;
}

const named = (res: Response, ref: PaymentRef) => {
  res.headers.set(TRANSACTION_ID_HEADER, ref.transactionId);
  return res;
};

const seal = (k: KnownContext, ref: PaymentRef, answer: AnswerParts) =>
  sealAnswer(k.input.env, ref.tenantId, ref.transactionId, answer);
