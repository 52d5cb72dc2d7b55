import type { Context, MiddlewareHandler } from "hono";
import { getConfig } from "../config.ts";
import type { AccessLogVariables } from "../http/access-log.ts";
import { ApiError } from "../http/errors.ts";
import type { RateLimitDecision } from "../keys/record.ts";
import { clientBucket } from "./client-bucket.ts";

/**
 * Buckets (a key id, or a client address `ip:…`) known to be over their limit in this isolate, until their window
 * resets: denied without calling the object.
 */
const deniedUntil = new Map<string, number>();
const MAX_NOTES = 10_000;

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

/** The noted denial of `bucket`, if its window has not reset yet. */
export function notedDenial(bucket: string, limit: number, now: number): RateLimitDecision | undefined {
  const noted = deniedUntil.get(bucket);
  if (noted === undefined) return undefined;
  if (noted > now) return { allowed: false, limit, remaining: 0, resetAt: noted };
  deniedUntil.delete(bucket);
  return undefined;
}

export async function askLimiter(env: Env, bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(bucket));
  try {
    return await stub.hit(limit, windowMs);
  } catch (err) {
    if (!(err as { retryable?: boolean }).retryable || (err as { overloaded?: boolean }).overloaded) throw err;
    return await stub.hit(limit, windowMs);
  }
}

/**
 * Sets the bucket's `RateLimit-*` headers; over the limit, notes the bucket (unless `bucket` is `undefined`: a key,
 * whose object is asked on every request anyway) and throws `429` with `Retry-After`.
 */
export function enforce(c: Context, bucket: string | undefined, d: RateLimitDecision, now: number, message: string): void {
  c.header("RateLimit-Limit", String(d.limit));
  c.header("RateLimit-Remaining", String(d.remaining));
  c.header("RateLimit-Reset", String(secondsUntil(d.resetAt, now)));
  if (d.allowed) return;
  if (bucket !== undefined) {
    if (deniedUntil.size >= MAX_NOTES) deniedUntil.clear();
    deniedUntil.set(bucket, d.resetAt);
  }
  throw new ApiError("RATE_LIMITED", message, { headers: { "Retry-After": String(secondsUntil(d.resetAt, now)) } });
}

type ClientEnv = { Bindings: Env; Variables: AccessLogVariables };

const clientMessage = (limit: number) =>
  `Rate limit of ${limit} requests per window without a valid API key exceeded for this client address`;

/**
 * Counts a request that has no authenticated key (an operation without a key, or a failed authentication) against
 * its client address's exact per-window quota, in the same Durable Object class as the keys under the name
 * `clientBucket(CF-Connecting-IP)`. Sets the address's `RateLimit-*` headers; over the limit throws `429`.
 * If the object cannot answer, the request goes on uncounted (no headers): these requests do no tenant's work, and a
 * health check should report the database, not the limiter.
 */
export async function countClient<E extends ClientEnv>(c: Context<E>): Promise<void> {
  enforceClient(c, await clientDecision(c));
}

/** Counts the request against its client address and returns the decision (`undefined`: the object did not answer). */
export async function clientDecision<E extends ClientEnv>(c: Context<E>): Promise<RateLimitDecision | undefined> {
  const { ipMax, windowMs } = getConfig(c.env).rateLimit;
  const bucket = clientBucket(c.req.header("cf-connecting-ip"));
  const noted = notedDenial(bucket, ipMax, Date.now());
  if (noted) return noted;
  try {
    return await askLimiter(c.env, bucket, ipMax, windowMs);
  } catch {
    return undefined;
  }
}

/** Sets the address's `RateLimit-*` headers from `decision`; over the limit throws `429` (nothing without a decision). */
export function enforceClient<E extends ClientEnv>(c: Context<E>, decision: RateLimitDecision | undefined): void {
  if (!decision) return;
  if (!decision.allowed) c.set("errorCode", "CLIENT_RATE_LIMITED");
  enforce(
    c,
    clientBucket(c.req.header("cf-connecting-ip")),
    decision,
    Date.now(),
    clientMessage(getConfig(c.env).rateLimit.ipMax),
  );
}

/** The bucket of a client address's refused payment attempts (apart from its bucket of requests without a key). */
const refusedPaymentsBucket = (clientIp: string | undefined) => `refused-payments:${clientBucket(clientIp)}`;

const refusedPaymentsError = (limit: number, resetAt: number, now: number) =>
  new ApiError("RATE_LIMITED", `More than ${limit} refused payment attempts per window from this client address: retry later`, {
    headers: { "Retry-After": String(secondsUntil(resetAt, now)) },
  });

/**
 * The gateway's check before it verifies a payment (a facilitator `/verify`, or an `eth_call` on the Tempo RPC):
 * `429` when this isolate has noted the client address over its limit of refused payment attempts, answered from
 * memory (no Durable Object call, nothing verified); otherwise `undefined`. A request without a payment never
 * comes here. `clientIp` is the request's `CF-Connecting-IP`.
 */
export function refusedPaymentsDenial(env: Env, clientIp: string | undefined): ApiError | undefined {
  const { paymentRefusalMax } = getConfig(env).rateLimit;
  const now = Date.now();
  const noted = notedDenial(refusedPaymentsBucket(clientIp), paymentRefusalMax, now);
  return noted && refusedPaymentsError(paymentRefusalMax, noted.resetAt, now);
}

/**
 * Counts a refused payment attempt against its client address's exact per-window quota (a Durable Object named
 * `refused-payments:ip:…`). Over the limit: the address is noted (so `refusedPaymentsDenial` answers its next
 * attempts from memory) and the `429` is returned, to be answered instead of the refusal. Payments that verify
 * are never counted. If the object cannot answer, the refusal goes on uncounted.
 */
export async function countRefusedPayment(env: Env, clientIp: string | undefined): Promise<ApiError | undefined> {
  const { paymentRefusalMax, windowMs } = getConfig(env).rateLimit;
  const bucket = refusedPaymentsBucket(clientIp);
  let decision: RateLimitDecision;
  try {
    decision = await askLimiter(env, bucket, paymentRefusalMax, windowMs);
  } catch {
    return undefined;
  }
  if (decision.allowed) return undefined;
  if (deniedUntil.size >= MAX_NOTES) deniedUntil.clear();
  deniedUntil.set(bucket, decision.resetAt);
  return refusedPaymentsError(paymentRefusalMax, decision.resetAt, Date.now());
}

/** Counts every request it sees against its client address (operations without a key, `/openapi.json`). */
export function clientRateLimit(): MiddlewareHandler<{ Bindings: Env; Variables: AccessLogVariables }> {
  return async function clientRateLimit(c, next) {
    await countClient(c);
    await next();
  };
}
