import type { MiddlewareHandler } from "hono";
import { countingD1, formatServerTiming, newAccount, timedNamespace } from "../../lib/instrumentation.ts";
import { getConfig } from "../config.ts";

/**
 * Query accounting for development and benchmark builds (`SERVER_TIMING=on`).
 *
 * When on, the request runs against a per-request view of `c.env` whose `DB` and `RATE_LIMITER` bindings count and
 * time what the request does, and the response carries:
 *
 *   Server-Timing: d1;desc="statements=N";dur=X, do;desc="calls=M";dur=Y, app;dur=Z
 *
 * - `statements`: D1 statements issued by the request (`first`/`all`/`run`/`raw` count 1, `batch([...])` counts each
 *   statement of the batch, `exec(sql)` counts the statements D1 reports having run). Counted when issued, so a
 *   statement started in `waitUntil` before the response is built is included; one started later is not.
 * - `d1` dur: the summed wall time of those calls (milliseconds; concurrent calls each count in full).
 * - `do`: calls on Durable Object stubs obtained from `RATE_LIMITER`, `PAYMENT_COORDINATOR` or `CHANNELS` (RPC
 *   methods and `fetch`), and their summed time.
 * - `app`: the time spent in the rest of the middleware chain.
 *
 * Times come from `performance.now()`, which in Workers advances only across I/O: they measure I/O waits, not CPU.
 * When off (the default and production), this middleware is one cached config lookup and `next()`.
 */
export function serverTiming(): MiddlewareHandler<{ Bindings: Env }> {
  return async function serverTiming(c, next) {
    if (!getConfig(c.env).serverTiming) return next();

    const acc = newAccount();
    const env = c.env;
    // A per-request view: the shared `env` object is never mutated. Everything else is read through the prototype.
    c.env = Object.create(env, {
      DB: { value: countingD1(env.DB, acc), enumerable: true },
      RATE_LIMITER: { value: timedNamespace(env.RATE_LIMITER, acc), enumerable: true },
      PAYMENT_COORDINATOR: { value: timedNamespace(env.PAYMENT_COORDINATOR, acc), enumerable: true },
      CHANNELS: { value: timedNamespace(env.CHANNELS, acc), enumerable: true },
    }) as Env;
    const start = performance.now();
    try {
      await next();
    } finally {
      c.env = env;
    }
    const value = formatServerTiming(acc, performance.now() - start);
    try {
      c.res.headers.append("Server-Timing", value);
    } catch {
      // Immutable headers (a response passed through from elsewhere): copy it.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.append("Server-Timing", value);
    }
  };
}
