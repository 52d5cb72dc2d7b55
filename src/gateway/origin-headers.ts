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
    try {
      set(c.res.headers);
    } catch {
      // Immutable headers (a `fetch` or Cache API response passed on as it came): a copy with headers of its own.
      // Assigning over `c.res` would merge the old headers (its cookies too) back in, so it is cleared first.
      const copy = new Response(c.res.body, c.res);
      set(copy.headers);
      c.res = undefined;
      c.res = copy;
    }
  };
}

function set(headers: Headers) {
  headers.delete("Set-Cookie");
  for (const [name, value] of Object.entries(PAYMENT_ORIGIN_HEADERS)) headers.set(name, value);
}
