import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { getConfig } from "../../core/config.ts";
import type { HttpEnv } from "../../core/http/env.ts";

/** What a browser page of an allowed origin may send and read. */
const allowAllowed = cors({
  origin: (origin) => origin,
  allowMethods: ["GET", "POST", "PATCH", "DELETE"],
  // The document's request headers (keys, body type, retries, conditional writes) and its response headers.
  allowHeaders: ["Authorization", "X-Api-Key", "Content-Type", "Idempotency-Key", "If-Match", "If-None-Match", "X-D1-Bookmark"],
  exposeHeaders: [
    "X-Request-Id",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "Retry-After",
    "WWW-Authenticate",
    "ETag",
    "Idempotent-Replayed",
    "X-D1-Bookmark",
  ],
  maxAge: 600,
});

/**
 * Cross-origin browser access: none by default, which keeps API keys out of web pages; the origins listed in
 * `CORS_ALLOWED_ORIGINS` get CORS headers. A preflight (`OPTIONS`) is answered here, before authentication, so it is
 * never a 401: `204` with CORS headers for an allowed origin, a bare `204` (the browser then refuses) otherwise.
 */
export function corsPolicy(): MiddlewareHandler<HttpEnv> {
  return async function corsPolicy(c, next) {
    const allowed = getConfig(c.env).corsAllowedOrigins;
    const origin = c.req.header("origin");
    if (origin !== undefined && allowed.includes(origin)) return allowAllowed(c, next);
    if (c.req.method === "OPTIONS") return c.body(null, 204);
    await next();
    if (allowed.length > 0) c.header("Vary", "Origin", { append: true });
  };
}
