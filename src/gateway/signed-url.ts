import type { Context } from "hono";
import { encryptionSecret, getConfig } from "../core/config.ts";
import { ApiError } from "../core/http/errors.ts";
import { renderError } from "../core/http/render.ts";
import { VALIDITY_WINDOW_SECONDS } from "../core/payments.ts";
import { getDb } from "../db/client.ts";
import { claimSignedUrl, findPaymentTargetOfPaywall, insertSignedUrl, type PaymentTarget } from "../db/gateway.ts";
import { decodeBase64Url, encodeBase64Url } from "../lib/base64.ts";
import { hmacKey } from "../lib/hmac.ts";
import { randomHex } from "../lib/ids.ts";
import type { GatewayEnv } from "./env.ts";
import { methodNotAllowed, upstreamParts } from "./target.ts";
import { buyerBody } from "./transport/body.ts";
import { renderOutcome } from "./transport/render.ts";
import { callUpstream } from "./upstream/call.ts";
import { buyerResponseHeaders } from "./upstream/request.ts";

// SIGNED_URL paywalls: a settled payment is answered with a single-use URL; fetching it performs the upstream call.

/**
 * Signed URL tokens: `<id>.<expiresAtMs>.<base64url HMAC-SHA256(id.expiresAtMs)>`.
 *
 * The HMAC key is derived (HKDF-SHA256, info `signed-url v1`) from the Worker's `ENCRYPTION_KEY` secret, so no
 * second secret has to be provisioned; rotating that secret invalidates outstanding URLs, which live minutes.
 * The signature makes a token unforgeable and its expiry untamperable; the D1 row makes it single-use.
 */

const signingKey = (secret: string) => hmacKey(secret, "signed-url v1");

export async function signToken(secret: string, id: string, expiresAt: Date): Promise<string> {
  const message = `${id}.${expiresAt.getTime()}`;
  const mac = await crypto.subtle.sign("HMAC", await signingKey(secret), new TextEncoder().encode(message));
  return `${message}.${encodeBase64Url(new Uint8Array(mac))}`;
}

/** The token's id and expiry if its signature holds (expiry is checked by the caller, against the clock). */
export async function readToken(secret: string, token: string): Promise<{ id: string; expiresAt: Date } | undefined> {
  const match = /^([A-Za-z0-9_]{1,64})\.([0-9]{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const [, id, expires, sig] = match as unknown as [string, string, string, string];
  const mac = decodeBase64Url(sig);
  if (!mac) return undefined;
  const valid = await crypto.subtle.verify("HMAC", await signingKey(secret), mac, new TextEncoder().encode(`${id}.${expires}`));
  return valid ? { id, expiresAt: new Date(Number(expires)) } : undefined;
}

/** The answer to a settled SIGNED_URL payment: a single-use URL, valid for the paywall's validity window. */
export async function issueSignedUrl(
  env: Env,
  target: PaymentTarget,
  transactionId: string,
  headers: Record<string, string>,
): Promise<Response> {
  const expiresAt = new Date(Date.now() + VALIDITY_WINDOW_SECONDS * 1000);
  const id = `su_${randomHex(16)}`;
  const { paywall } = target;
  await insertSignedUrl(getDb(env.DB), { id, tenantId: paywall.tenantId, paywallId: paywall.id, transactionId, expiresAt });
  const token = await signToken(encryptionSecret(env), id, expiresAt);
  return Response.json(
    { data: { url: `${getConfig(env).paymentBaseUrl}/api/signed/${token}`, expiresAt: expiresAt.toISOString() } },
    { status: 200, headers: { ...headers, "Cache-Control": "no-store" } },
  );
}

/** A signed URL fetched: valid signature, unexpired, and claimed once; then the upstream call. */
export async function fulfilSignedUrl(c: Context<GatewayEnv>): Promise<Response> {
  const token = await readToken(encryptionSecret(c.env), c.req.param("token") ?? "");
  const now = new Date();
  if (!token || token.expiresAt <= now) throw new ApiError("NOT_FOUND", "This link is invalid or has expired");
  const db = getDb(c.env.DB);
  const claimed = await claimSignedUrl(db, token.id, now);
  if (!claimed) throw new ApiError("NOT_FOUND", "This link is invalid, has expired or was already used");
  const target = await findPaymentTargetOfPaywall(db, claimed.paywallId);
  if (!target) throw new ApiError("NOT_FOUND", "The paywall behind this link no longer exists");
  const notAllowed = methodNotAllowed(c.req.method, target);
  if (notAllowed) throw notAllowed;
  const { method, url, headers } = c.req.raw;
  const parts = await upstreamParts(c.env, target, { method, url, headers, body: await buyerBody(c) });
  if (!parts.ok) return renderOutcome(c, parts.stop);
  const outcome = await callUpstream(c.req.method, parts.value, target.paywall.timeout);
  if (outcome.kind === "timeout") {
    c.set("errorCode", "UPSTREAM_TIMEOUT");
    return renderError(new ApiError("GATEWAY_TIMEOUT", "The upstream did not answer in time"), c);
  }
  if (outcome.kind === "unreachable") {
    c.set("errorCode", "UPSTREAM_UNREACHABLE");
    return renderError(new ApiError("BAD_GATEWAY", "The upstream could not be reached"), c);
  }
  if (outcome.status >= 500) c.set("errorCode", "UPSTREAM_ERROR");
  return new Response(outcome.body, { status: outcome.status, headers: buyerResponseHeaders(outcome.headers) });
}
