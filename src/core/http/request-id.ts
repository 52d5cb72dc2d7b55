import type { MiddlewareHandler } from "hono";
import { newId } from "../../lib/ids.ts";

/** Gives every request a server-made id (`req_…`), as `c.var.requestId` and the `X-Request-Id` header. A client's id is not trusted. */
export type RequestIdVariables = { requestId: string };

export function requestId(): MiddlewareHandler<{ Variables: RequestIdVariables }> {
  return async function requestId(c, next) {
    const id = newId("req");
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    await next();
  };
}
