import type { MiddlewareHandler } from "hono";

/** Answers that describe one tenant's private state (the API's, the dashboard's pages): never cached. */
export function noStore(): MiddlewareHandler {
  return async function noStore(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
  };
}
