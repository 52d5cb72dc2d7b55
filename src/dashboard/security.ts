/**
 * The dashboard's browser protections:
 * - CSRF: every state-changing request must come from this origin (`hono/csrf`: `Origin` or `Sec-Fetch-Site`),
 *   and may only carry a form body (so no other content type can slip past the origin check); the session cookie
 *   is `SameSite=Lax` on top.
 * - A strict Content-Security-Policy: scripts and styles only from this origin or with the response's nonce,
 *   nothing else loaded, forms only to this origin, and `frame-ancestors 'none'` (the app's `secureHeaders` adds
 *   `X-Frame-Options` and `Referrer-Policy: no-referrer`).
 */
import type { MiddlewareHandler } from "hono";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { randomHex } from "../lib/ids.ts";
import type { DashboardEnv } from "./env.ts";

const FORM_TYPE = /^(application\/x-www-form-urlencoded|multipart\/form-data)(;|$)/i;
const SAFE_METHOD = /^(GET|HEAD|OPTIONS)$/;

export function sameOriginForms(): MiddlewareHandler<DashboardEnv> {
  const originCheck = csrf();
  return async function sameOriginForms(c, next) {
    if (!SAFE_METHOD.test(c.req.method) && !FORM_TYPE.test(c.req.header("content-type") ?? "")) {
      throw new HTTPException(415, { message: "Dashboard forms only" });
    }
    return originCheck(c, next);
  };
}

export function contentSecurityPolicy(): MiddlewareHandler<DashboardEnv> {
  return async function contentSecurityPolicy(c, next) {
    const nonce = randomHex(16);
    c.set("cspNonce", nonce);
    await next();
    c.header(
      "Content-Security-Policy",
      [
        "default-src 'none'",
        `script-src 'self' 'nonce-${nonce}'`,
        `style-src 'self' 'nonce-${nonce}'`,
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ].join("; "),
    );
  };
}
