import type { MiddlewareHandler } from "hono";
import { getConfig } from "../../core/config.ts";
import type { AccessLogVariables } from "../../core/http/access-log.ts";
import { ApiError } from "../../core/http/errors.ts";
import type { RateLimitDecision } from "../../core/rate-limit/durable-object.ts";
import { askLimiter, enforce, notedDenial } from "../../core/rate-limit/limiter.ts";
import type { AuthVariables } from "./auth.ts";

export type RateLimitVariables = { rateLimit: RateLimitDecision };

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

    let decision = notedDenial(keyId, max, now);
    if (!decision) {
      try {
        decision = await askLimiter(c.env, keyId, max, windowMs);
      } catch {
        c.set("errorCode", "RATE_LIMITER_UNAVAILABLE");
        throw new ApiError("SERVICE_UNAVAILABLE", "Rate limiting is temporarily unavailable; retry shortly", {
          headers: { "Retry-After": "1" },
        });
      }
    }
    // The object's clock may be ahead of `now` (taken before the call): seconds are counted from the answer on.
    enforce(c, keyId, decision, Date.now(), `Rate limit of ${decision.limit} requests per window exceeded`);
    c.set("rateLimit", decision);
    await next();
  };
}
