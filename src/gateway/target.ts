import type { Context } from "hono";
import { getConfig, keyRing } from "../core/config.ts";
import { ApiError, CLIENT_ABORT_STATUS } from "../core/http/errors.ts";
import { networkTable } from "../core/money/network-table.ts";
import { type NetworkId, supportsMpp } from "../core/money/networks.ts";
import type { AuthMethod } from "../core/secrets/auth-config.ts";
import { getDb } from "../db/client.ts";
import { findPaymentTarget, type PaymentTarget } from "../db/gateway.ts";
import { cacheRulesFor, forwardedQuery } from "./answer-cache.ts";
import type { GatewayEnv } from "./env.ts";
import { upstreamAllowed } from "./upstream/call.ts";
import { openAuthConfig, openPaywallHeaders } from "./upstream/credentials.ts";
import { BodyFieldError, forwardableHeaders, injectAuth, targetUrl, type UpstreamParts, withQuery } from "./upstream/request.ts";

export type Protocol = "x402" | "mpp";
type Ctx = Context<GatewayEnv>;

/** `405` with `Allow` when the paywall does not take this method. */
export function requireAllowedMethod(c: Ctx, target: PaymentTarget): void {
  if (!target.paywall.allowedMethods.includes(c.req.method)) {
    throw new ApiError("METHOD_NOT_ALLOWED", `Method ${c.req.method} is not allowed here`, {
      headers: { Allow: target.paywall.allowedMethods.join(", ") },
    });
  }
}

/** The paywall behind a payment URL: `404` unknown, disabled or not offering `protocol`; `405` outside allowedMethods. */
export async function resolveTarget(c: Ctx, protocol: Protocol): Promise<PaymentTarget> {
  const target = await findPaymentTarget(
    getDb(c.env.DB),
    c.req.param("serviceId") ?? "",
    c.req.param("slug") ?? "",
    getConfig(c.env).paywallStateTtlMs,
  );
  if (!target) throw new ApiError("NOT_FOUND", "No such paywall");
  if (!target.paywall.enabled)
    throw new ApiError("NOT_FOUND", "This paywall is disabled: it takes no payments until its owner enables it");
  const networks = target.paywall.networks;
  const table = networkTable(c.env);
  const offered = protocol === "mpp" ? supportsMpp(networks) : networks.some((n) => table[n as NetworkId]?.kind === "evm");
  if (!offered) throw new ApiError("NOT_FOUND", `This paywall takes no ${protocol === "mpp" ? "MPP" : "x402"} payments`);
  requireAllowedMethod(c, target);
  return target;
}

/** The buyer-facing URL of a paywall for one protocol (what its 402 names as the resource). */
export const paymentUrl = (c: Ctx, protocol: Protocol, t: PaymentTarget) =>
  `${getConfig(c.env).paymentBaseUrl}/api/${protocol}/pay/${encodeURIComponent(t.service.id)}/${encodeURIComponent(t.paywall.slug)}`;

/**
 * The buyer's body, read whole, once per request (Hono keeps it: the payment's request fingerprint and the upstream
 * request read the same bytes); a client that goes away mid-upload is logged as such (499), never as our failure.
 */
export async function buyerBody(c: Ctx): Promise<ArrayBuffer | undefined> {
  if (c.req.method === "GET") return undefined;
  try {
    return await c.req.arrayBuffer();
  } catch (err) {
    if (err instanceof ApiError) throw err; // the body limit's 413
    c.set("errorCode", "CLIENT_ABORTED");
    throw new ApiError("VALIDATION_ERROR", "The request body was not received in full", { status: CLIENT_ABORT_STATUS });
  }
}

/**
 * The upstream request for this buyer request: target, query, headers and credentials, in that precedence. A
 * paywall whose answers are cached under `varyQuery` forwards only those parameters: what its cache key holds.
 * Refused before any payment is verified when the body cannot carry a `json-body-field` credential (400) or
 * the final URL is in a denied range (502: the paywall is misconfigured, the buyer is not charged).
 */
export async function upstreamParts(c: Ctx, t: PaymentTarget, request: Request): Promise<UpstreamParts> {
  const ring = keyRing(c.env);
  const [authConfig, paywallHeaders] = await Promise.all([openAuthConfig(ring, t.service), openPaywallHeaders(ring, t.paywall)]);
  const query = forwardedQuery(new URL(request.url).searchParams, cacheRulesFor(t));
  const url = withQuery(targetUrl(t.paywall, t.service), query, t.paywall.queryParams ?? []);
  const headers = forwardableHeaders(request.headers, t.paywall.allowedHeaders);
  for (const { key, value } of paywallHeaders) headers.set(key, value);
  const body = await buyerBody(c);
  let parts: UpstreamParts;
  try {
    parts = injectAuth(
      t.service.authMethod as AuthMethod,
      authConfig,
      { url, headers, body: body && body.byteLength > 0 ? body : undefined },
      { authorization: request.headers.get("authorization"), method: request.method },
    );
  } catch (err) {
    if (err instanceof BodyFieldError) throw new ApiError("VALIDATION_ERROR", err.message);
    throw err;
  }
  if (!upstreamAllowed(parts.url, getConfig(c.env)))
    throw new ApiError("BAD_GATEWAY", "The paywall's upstream address is not allowed");
  return parts;
}
