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
    let res = c.res;
    try {
      res.headers.delete("Set-Cookie");
    } catch {
      // Immutable headers (a response passed through as it came): copy it.
      res = new Response(res.body, res);
      res.headers.delete("Set-Cookie");
    }
    for (const [name, value] of Object.entries(PAYMENT_ORIGIN_HEADERS)) res.headers.set(name, value);
    c.res = res;
  };
}
