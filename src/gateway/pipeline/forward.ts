import { ApiError } from "../../core/http/errors.ts";
import type { PaymentTarget } from "../../db/gateway.ts";
import type { CacheRules } from "../../lib/cache-rules.ts";
import { answerCacheKey, CACHE_STATUS_HEADER, cachedAnswer, cacheRulesFor, isStorable } from "../answer-cache.ts";
import { type AnswerParts, TRANSACTION_ID_HEADER } from "../paid-answer.ts";
import { callUpstream } from "../upstream/call.ts";
import { buyerResponseHeaders, type UpstreamParts } from "../upstream/request.ts";
import type { Outcome, PaymentInput } from "./method.ts";
import type { UpstreamOutcome } from "./record.ts";

/**
 * What a claimed payment is settled for, as a value: a `signed-url` (SIGNED_URL: nothing forwarded, the URL issued
 * once settled), or the `answer` the buyer gets once it is settled (the upstream's, or the edge cache's; with what
 * other buyers may be served of it, `shared`, stored once settled); or `unpaid`: the upstream failed (an error, a
 * timeout, no answer), the payment is not charged and `outcome` is the buyer's answer.
 */
export type Forwarded =
  | { kind: "signed-url"; upstream: UpstreamOutcome }
  | { kind: "answer"; answer: AnswerParts & { headers: Headers }; upstream: UpstreamOutcome; shared?: Shared }
  | { kind: "unpaid"; reason: string; upstream: UpstreamOutcome; outcome: Outcome };

/** An upstream answer any buyer may be served from the edge cache, under `key`. */
export interface Shared {
  key: string;
  rules: CacheRules;
  answer: AnswerParts;
}

/**
 * The edge cache (answer-cache.ts): a fresh answer to the same request stands in for the upstream call; the payment is
 * settled all the same, and the answer is served only once it is. Else the upstream is called, within `timeoutMs`.
 * Every answer names the transaction (`Payment-Transaction-Id`).
 */
export async function forward(
  input: PaymentInput,
  target: PaymentTarget,
  parts: UpstreamParts,
  transactionId: string,
  timeoutMs: number,
): Promise<Forwarded> {
  if (target.paywall.fulfillmentMode === "SIGNED_URL")
    return { kind: "signed-url", upstream: { statusCode: 200, responseTime: null } };
  const rules = cacheRulesFor(target);
  const key = rules && (await answerCacheKey(target, rules, input.request, input.request.body));
  const hit = rules && key ? await cachedAnswer(key, rules) : null;
  if (hit) {
    const headers = new Headers(hit.answer.headers);
    headers.set(TRANSACTION_ID_HEADER, transactionId);
    headers.set(CACHE_STATUS_HEADER, "HIT");
    headers.set("Age", String(hit.age));
    const upstream: UpstreamOutcome = { statusCode: hit.answer.status, responseTime: null, cache: "hit" };
    return { kind: "answer", answer: { status: hit.answer.status, headers, body: hit.answer.body }, upstream };
  }
  return called(input, parts, transactionId, timeoutMs, rules && key ? { rules, key } : null);
}

/** The upstream called: its answer below 400 to settle for, else what ends the payment unpaid. */
async function called(
  input: PaymentInput,
  parts: UpstreamParts,
  transactionId: string,
  timeoutMs: number,
  cache: { rules: CacheRules; key: string } | null,
): Promise<Forwarded> {
  const outcome = await callUpstream(input.request.method, parts, timeoutMs);
  if (outcome.kind !== "answered") {
    const timedOut = outcome.kind === "timeout";
    const headers = { [TRANSACTION_ID_HEADER]: transactionId };
    const error = timedOut
      ? new ApiError("GATEWAY_TIMEOUT", "The upstream did not answer in time; the payment was not charged", { headers })
      : new ApiError("BAD_GATEWAY", "The upstream could not be reached; the payment was not charged", { headers });
    return {
      kind: "unpaid",
      reason: timedOut ? `upstream timed out after ${timeoutMs} ms` : "upstream unreachable",
      upstream: { statusCode: timedOut ? 504 : 502, responseTime: outcome.ms },
      outcome: { kind: "error", error, errorCode: timedOut ? "UPSTREAM_TIMEOUT" : "UPSTREAM_UNREACHABLE" },
    };
  }
  const upstream: UpstreamOutcome = {
    statusCode: outcome.status,
    responseTime: outcome.ms,
    ...(cache ? { cache: "miss" as const } : {}),
  };
  const headers = buyerResponseHeaders(outcome.headers);
  // What other buyers may be served: the upstream's answer as any buyer gets it, before this payment's own headers.
  const shared =
    cache && isStorable(cache.rules, outcome)
      ? { ...cache, answer: { status: outcome.status, headers: new Headers(headers), body: outcome.body } }
      : undefined;
  headers.set(TRANSACTION_ID_HEADER, transactionId);
  if (cache) headers.set(CACHE_STATUS_HEADER, "MISS");
  const answer = { status: outcome.status, headers, body: outcome.body };
  if (outcome.status >= 400) {
    const response = new Response(outcome.body, { status: outcome.status, headers });
    const errorCode = outcome.status >= 500 ? ("UPSTREAM_ERROR" as const) : undefined;
    const reason = `upstream answered ${outcome.status}`;
    return { kind: "unpaid", reason, upstream, outcome: { kind: "answer", response, ...(errorCode ? { errorCode } : {}) } };
  }
  return { kind: "answer", answer, upstream, ...(shared ? { shared } : {}) };
}
