import { getConfig, keyRing } from "../core/config.ts";
import { ApiError } from "../core/http/errors.ts";
import type { AuthMethod } from "../core/secrets/auth-config.ts";
import { getDb } from "../db/client.ts";
import { findPaymentTarget, type PaymentTarget } from "../db/gateway.ts";
import { cacheRulesFor, forwardedQuery } from "./answer-cache.ts";
import { fail, go, type Protocol, type Step } from "./pipeline/method.ts";
import { upstreamAllowed } from "./upstream/call.ts";
import { openAuthConfig, openPaywallHeaders } from "./upstream/credentials.ts";
import { BodyFieldError, forwardableHeaders, injectAuth, targetUrl, type UpstreamParts, withQuery } from "./upstream/request.ts";

export type { Protocol } from "./pipeline/method.ts";

/** `405` with `Allow` when the paywall does not take this method; `undefined` when it does. */
export function methodNotAllowed(method: string, target: PaymentTarget): ApiError | undefined {
  if (target.paywall.allowedMethods.includes(method)) return undefined;
  return new ApiError("METHOD_NOT_ALLOWED", `Method ${method} is not allowed here`, {
    headers: { Allow: target.paywall.allowedMethods.join(", ") },
  });
}

/**
 * The paywall behind a payment URL: `404` unknown, disabled or not offering the method (`offered`, named `label`);
 * `405` outside allowedMethods.
 */
export async function findTarget(
  env: Env,
  route: { serviceId: string; slug: string },
  method: string,
  offered: (target: PaymentTarget) => boolean,
  label: string,
): Promise<Step<PaymentTarget>> {
  const target = await findPaymentTarget(getDb(env.DB), route.serviceId, route.slug, getConfig(env).paywallStateTtlMs);
  if (!target) return fail(new ApiError("NOT_FOUND", "No such paywall"));
  if (!target.paywall.enabled) {
    return fail(new ApiError("NOT_FOUND", "This paywall is disabled: it takes no payments until its owner enables it"));
  }
  if (!offered(target)) return fail(new ApiError("NOT_FOUND", `This paywall takes no ${label} payments`));
  const notAllowed = methodNotAllowed(method, target);
  return notAllowed ? fail(notAllowed) : go(target);
}

/** The buyer-facing URL of a paywall for one protocol (what its 402 names as the resource). */
export const paymentUrl = (env: Env, protocol: Protocol, t: PaymentTarget) =>
  `${getConfig(env).paymentBaseUrl}/api/${protocol}/pay/${encodeURIComponent(t.service.id)}/${encodeURIComponent(t.paywall.slug)}`;

/**
 * The upstream request for this buyer request: target, query, headers and credentials, in that precedence. A
 * paywall whose answers are cached under `varyQuery` forwards only those parameters: what its cache key holds.
 * Refused before any payment is verified when the body cannot carry a `json-body-field` credential (400) or
 * the final URL is in a denied range (502: the paywall is misconfigured, the buyer is not charged).
 */
export async function upstreamParts(
  env: Env,
  t: PaymentTarget,
  request: { method: string; url: string; headers: Headers; body: ArrayBuffer | undefined },
): Promise<Step<UpstreamParts>> {
  const ring = keyRing(env);
  const [authConfig, paywallHeaders] = await Promise.all([openAuthConfig(ring, t.service), openPaywallHeaders(ring, t.paywall)]);
  const query = forwardedQuery(new URL(request.url).searchParams, cacheRulesFor(t));
  const url = withQuery(targetUrl(t.paywall, t.service), query, t.paywall.queryParams ?? []);
  const headers = forwardableHeaders(request.headers, t.paywall.allowedHeaders);
  for (const { key, value } of paywallHeaders) headers.set(key, value);
  const { body } = request;
  let parts: UpstreamParts;
  try {
    parts = injectAuth(
      t.service.authMethod as AuthMethod,
      authConfig,
      { url, headers, body: body && body.byteLength > 0 ? body : undefined },
      { authorization: request.headers.get("authorization"), method: request.method },
    );
  } catch (err) {
    if (err instanceof BodyFieldError) return fail(new ApiError("VALIDATION_ERROR", err.message));
    throw err;
  }
  if (!upstreamAllowed(parts.url, getConfig(env)))
    return fail(new ApiError("BAD_GATEWAY", "The paywall's upstream address is not allowed"));
  return go(parts);
}
