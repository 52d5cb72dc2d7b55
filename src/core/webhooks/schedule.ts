// How webhook deliveries are retried, and when an endpoint is disabled (docs/webhooks.md, "Retries").

/** Attempts of one delivery before it is given up (`failed`); a tenant's retry adds one more each time. */
export const WEBHOOK_MAX_ATTEMPTS = 8;

/**
 * Seconds to wait after failed attempt n (1-based) before attempt n + 1: 30 s, 2 min, 10 min, 30 min, 2 h, 6 h and
 * 12 h (a queue message waits at most 12 h), about 21 hours from the first attempt to the last.
 */
export const WEBHOOK_RETRY_DELAYS_S = [30, 120, 600, 1_800, 7_200, 21_600, 43_200] as const;

/** Failed attempts in a row (across deliveries, no success between) after which the endpoint is disabled. */
export const WEBHOOK_DISABLE_AFTER = 10;

/**
 * How long an endpoint has to answer an attempt. Kept short: a batch's messages are attempted side by side, and the
 * batch (with other tenants' deliveries behind it in the queue) waits for its slowest endpoint at most this long.
 */
export const WEBHOOK_TIMEOUT_MS = 5_000;

/** Bytes of an endpoint's answer kept in the delivery log (text bodies only). */
export const WEBHOOK_RESPONSE_EXCERPT_BYTES = 256;

/**
 * A pending delivery this long past due (its message never sent, or lost) is sent to the queue again by the
 * five-minute sweep.
 */
export const WEBHOOK_OVERDUE_MS = 2 * 60_000;

/** The wait before the next attempt after `attempts` attempts failed, or `null` when none is left. */
export function retryDelaySeconds(attempts: number): number | null {
  if (attempts >= WEBHOOK_MAX_ATTEMPTS) return null;
  return WEBHOOK_RETRY_DELAYS_S[Math.max(1, attempts) - 1] ?? null;
}
