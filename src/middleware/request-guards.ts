import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../errors.ts";
import { hasPrototypeKey } from "../lib/json-shape.ts";

export const MAX_BODY_BYTES = 100 * 1024;

/** Refuses bodies over 100 KiB with 413, whether sized by `Content-Length` or streamed chunked. */
export const limitBody = (): MiddlewareHandler =>
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ApiError("VALIDATION_ERROR", `Request body exceeds ${MAX_BODY_BYTES} bytes`, { status: 413 });
    },
  });

/** The JSON media types the route validators read (the same pattern as @hono/zod-openapi). */
const JSON_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/**
 * A request body must say it is JSON (415 otherwise, so a form post is never read as an empty object), and may
 * not carry a `__proto__` key, which the schemas could not see. The text is cached for the route's validator.
 */
export function requireJsonBody(): MiddlewareHandler {
  return async function requireJsonBody(c, next) {
    if (c.req.raw.body !== null) {
      if (!JSON_TYPE.test(c.req.header("content-type") ?? "")) {
        throw new ApiError("VALIDATION_ERROR", "Request body must be JSON (Content-Type: application/json)", { status: 415 });
      }
      if (hasPrototypeKey(await c.req.text())) {
        throw new ApiError("VALIDATION_ERROR", "The request is not valid", {
          details: [{ path: "", message: "The key __proto__ is not allowed" }],
        });
      }
    }
    await next();
  };
}

/** API responses describe one tenant's private state: never cache them. */
export function noStore(): MiddlewareHandler {
  return async function noStore(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
  };
}
