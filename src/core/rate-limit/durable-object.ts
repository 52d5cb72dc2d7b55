import { DurableObject } from "cloudflare:workers";

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
}

interface Window {
  start: number;
  count: number;
}

/**
 * Exact fixed-window counter, one object per API key. The window starts at its first request.
 * `hit` never awaits between reading and writing the count, so concurrent requests cannot both
 * take the last slot; the count is written to the object's SQLite storage so an evicted object resumes it.
 */
export class RateLimiter extends DurableObject {
  private window: Window | undefined;

  hit(limit: number, windowMs: number): RateLimitDecision {
    const now = Date.now();
    let w = this.window ?? this.ctx.storage.kv.get<Window>("window");
    if (!w || now >= w.start + windowMs) w = { start: now, count: 0 };
    const resetAt = w.start + windowMs;
    if (w.count >= limit) {
      this.window = w;
      return { allowed: false, limit, remaining: 0, resetAt };
    }
    w = { start: w.start, count: w.count + 1 };
    this.window = w;
    this.ctx.storage.kv.put("window", w);
    return { allowed: true, limit, remaining: limit - w.count, resetAt };
  }
}
