import type { Context, MiddlewareHandler } from "hono";
import { getConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { AccessLogVariables } from "../middleware/access-log.ts";
import type { AuthVariables } from "../middleware/auth.ts";
import type { RateLimitDecision } from "./durable-object.ts";

export type RateLimitVariables = { rateLimit: RateLimitDecision };

/** Keys known to be over their limit in this isolate, until their window resets: denied without calling the object. */
const deniedUntil = new Map<string, number>();
const MAX_NOTES = 10_000;

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

async function askLimiter(env: Env, keyId: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyId));
  try {
    return await stub.hit(limit, windowMs);
  } catch (err) {
    if (!(err as { retryable?: boolean }).retryable || (err as { overloaded?: boolean }).overloaded) throw err;
    return await stub.hit(limit, windowMs);
  }
}

function setRateLimitHeaders(c: Context, d: RateLimitDecision, now: number) {
  c.header("RateLimit-Limit", String(d.limit));
  c.header("RateLimit-Remaining", String(d.remaining));
  c.header("RateLimit-Reset", String(secondsUntil(d.resetAt, now)));
}

/**
 * Counts the request against its key's exact per-window quota in the key's Durable Object.
 * If the object cannot answer (after one retry of a retryable error) the request fails closed with 503.
 */
export function rateLimit(): MiddlewareHandler<{
  Bindings: Env;
  Variables: AuthVariables & RateLimitVariables & AccessLogVariables;
}> {
  return async function rateLimit(c, next) {
    const { max, windowMs } = getConfig(c.env).rateLimit;
    const keyId = c.var.auth.keyId;
    const now = Date.now();

    let decision: RateLimitDecision;
    const noted = deniedUntil.get(keyId);
    if (noted !== undefined && noted > now) {
      decision = { allowed: false, limit: max, remaining: 0, resetAt: noted };
    } else {
      if (noted !== undefined) deniedUntil.delete(keyId);
      try {
        decision = await askLimiter(c.env, keyId, max, windowMs);
      } catch {
        c.set("errorCode", "RATE_LIMITER_UNAVAILABLE");
        throw new ApiError("SERVICE_UNAVAILABLE", "Rate limiting is temporarily unavailable; retry shortly", {
          headers: { "Retry-After": "1" },
        });
      }
    }

    setRateLimitHeaders(c, decision, now);
    if (!decision.allowed) {
      if (deniedUntil.size >= MAX_NOTES) deniedUntil.clear();
      deniedUntil.set(keyId, decision.resetAt);
      throw new ApiError("RATE_LIMITED", `Rate limit of ${decision.limit} requests per window exceeded`, {
        headers: { "Retry-After": String(secondsUntil(decision.resetAt, now)) },
      });
    }
    c.set("rateLimit", decision);
    await next();
  };
}
