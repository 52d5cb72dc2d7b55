// The Worker under test: the real one, plus a deliberately broken rate limiter that proves the exactness test can fail.
import { DurableObject } from "cloudflare:workers";
import type { RateLimitDecision } from "../../src/core/keys/record.ts";

export { ChannelObject, default, FacilitatorHealthObject, PaymentCoordinator, RateLimiter } from "../../src/index.ts";

interface Window {
  start: number;
  count: number;
}

/**
 * Mutant: yields to the event loop between reading and writing the count, so concurrent requests race.
 * (Awaiting storage alone would not: input gates hold other events back during storage operations.)
 */
export class RacyRateLimiter extends DurableObject {
  async hit(limit: number, windowMs: number): Promise<RateLimitDecision> {
    const now = Date.now();
    let w = await this.ctx.storage.get<Window>("window");
    if (!w || now >= w.start + windowMs) w = { start: now, count: 0 };
    if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetAt: w.start + windowMs };
    await scheduler.wait(1);
    await this.ctx.storage.put("window", { start: w.start, count: w.count + 1 });
    return { allowed: true, limit, remaining: limit - w.count - 1, resetAt: w.start + windowMs };
  }
}
