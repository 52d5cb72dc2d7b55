import { headerText } from "../lib/header-rules.ts";
import { supportsMpp } from "./money/networks.ts";

// What buyers of a paywall meet, whichever app shows it: its payment URLs and how long a payment request stays valid.

/** Seconds a 402's payment requirements stay valid (the paywall's `validityWindow`). */
export const VALIDITY_WINDOW_SECONDS = 300;

/**
 * Seconds a paid answer stays servable to the same payment presented again, from when its payment completed (by its
 * request, or by the sweep): longer than any credential stays presentable (the validity window, plus the minute of
 * clock skew an x402 authorization's `validBefore` may add).
 */
export const PAID_ANSWER_KEEP_SECONDS = 600;

/**
 * How long a payment's claim on its answer is kept while its payment is PENDING (the sweep settles it within minutes,
 * or an hour for one the chain cannot tell): once COMPLETED, its answer is kept `PAID_ANSWER_KEEP_SECONDS` from then.
 */
export const PENDING_CLAIM_MS = 24 * 60 * 60 * 1000;

export interface PaymentUrls {
  x402: string | null;
  mpp: string | null;
}

/** Buyer-facing payment URLs of a paywall; both `null` without a service, `mpp` only with a Tempo network. */
export function paymentUrls(base: string, serviceId: string | null, slug: string, networks: readonly string[]): PaymentUrls {
  if (!serviceId) return { x402: null, mpp: null };
  const tail = `${encodeURIComponent(serviceId)}/${encodeURIComponent(slug)}`;
  return {
    x402: `${base}/api/x402/pay/${tail}`,
    mpp: supportsMpp(networks) ? `${base}/api/mpp/pay/${tail}` : null,
  };
}

/**
 * Whether a request is for the payment origin: its host (with the port) is the host of `PAYMENT_BASE_URL`. Every
 * other host is the API origin; the two never answer each other's paths.
 */
export function isPaymentOrigin(requestUrl: string, paymentBaseUrl: string): boolean {
  return new URL(requestUrl).host === new URL(paymentBaseUrl).host;
}

/** The most characters of a paywall's description a 402 carries (in the challenge header of either standard). */
export const MAX_CHALLENGE_DESCRIPTION = 300;

/**
 * What a paywall's 402s say it sells: its description, else its name, on one line (line breaks, tabs and control
 * characters folded to spaces: the dashboard's textarea sends CRLF) and at most `MAX_CHALLENGE_DESCRIPTION`
 * characters, so the challenge header can always be built. Its documents keep the full text.
 */
export const challengeDescription = (paywall: { description: string | null; name: string }): string =>
  headerText(paywall.description ?? paywall.name, MAX_CHALLENGE_DESCRIPTION);
