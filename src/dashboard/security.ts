/**
 * The dashboard's browser protections:
 * - CSRF: every state-changing request must come from this origin (`hono/csrf`: `Origin` or `Sec-Fetch-Site`),
 *   and may only carry a form body (so no other content type can slip past the origin check); the session cookie
 *   is `SameSite=Lax` on top.
 * - Form bodies are read here, once, before any page sees them: at most `MAX_FORM_BYTES` (413), and a body that is
 *   not a well-formed form (a broken multipart body, a missing boundary, broken percent-encoding) is refused with 400.
 * - A strict Content-Security-Policy: scripts and styles only from this origin or with the response's nonce,
 *   nothing else loaded, forms only to this origin, and `frame-ancestors 'none'` (the app's `secureHeaders` adds
 *   `X-Frame-Options` and `Referrer-Policy: no-referrer`).
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
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

/** The largest form body the dashboard reads (its largest form, a service with its discovery text, fits well within). */
export const MAX_FORM_BYTES = 256 * 1024;

/** Every `%` followed by two hex digits, and what they encode valid UTF-8: what a browser sends. */
function wellEncoded(body: string): boolean {
  try {
    for (const part of body.split("&")) decodeURIComponent(part.replaceAll("+", " "));
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads a state-changing request's form body once (pages then read Hono's cached copy): over `MAX_FORM_BYTES` → 413,
 * not a well-formed form → 400. Runs after `sameOriginForms`, which has refused every other content type.
 */
export function formBodies(): MiddlewareHandler<DashboardEnv> {
  const limit = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: () => {
      throw new HTTPException(413, { message: "Form too large" });
    },
  });
  return async function formBodies(c, next) {
    if (SAFE_METHOD.test(c.req.method)) return next();
    return limit(c, async () => {
      if (!(await readableForm(c))) throw new HTTPException(400, { message: "Malformed form" });
      await next();
    });
  };
}

/** Whether the body parses as a form (Hono keeps the parsed copy); a urlencoded one must also be well encoded. */
async function readableForm(c: Context<DashboardEnv>): Promise<boolean> {
  try {
    const urlencoded = /^application\/x-www-form-urlencoded/i.test(c.req.header("content-type") ?? "");
    if (urlencoded && !wellEncoded(new TextDecoder().decode(await c.req.arrayBuffer()))) return false;
    await c.req.parseBody();
    return true;
  } catch {
    return false;
  }
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
