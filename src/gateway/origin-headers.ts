import type { MiddlewareHandler } from "hono";

/**
 * Headers on every answer of the payment origin, whatever the upstream sent: nothing it answers may run as a page
 * (`sandbox`: an opaque origin, no script, no form, no plugin), load anything, be sniffed into another type, or be
 * read by another origin's page; and no cookie of ours is ever set here.
 */
export const PAYMENT_ORIGIN_HEADERS = {
  "Content-Security-Policy": "sandbox; default-src 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Referrer-Policy": "no-referrer",
} as const;

export function paymentOriginHeaders(): MiddlewareHandler {
  return async function paymentOriginHeaders(c, next) {
    await next();
    // A fresh response with its own headers: the one answered may have immutable headers (as a `fetch` or Cache API
    // response does), and assigning over `c.res` would merge the old headers (its cookies too) back in, so it is
    // cleared first.
    const headers = new Headers(c.res.headers);
    headers.delete("Set-Cookie");
    for (const [name, value] of Object.entries(PAYMENT_ORIGIN_HEADERS)) headers.set(name, value);
    const res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers });
    c.res = undefined;
    c.res = res;
  };
}
