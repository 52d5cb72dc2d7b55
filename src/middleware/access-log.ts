import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../types.ts";

/** One structured JSON line per request. It names the key and tenant by id only: never a key, a body or a query string. */
export function accessLog(): MiddlewareHandler<AppEnv> {
  return async function accessLog(c, next) {
    const start = performance.now();
    await next();
    const auth = c.get("auth");
    const line = {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - start) * 100) / 100,
      keyId: auth?.keyId ?? null,
      tenantId: auth?.tenant.id ?? null,
      ...(c.get("errorCode") ? { error: c.get("errorCode") } : {}),
    };
    if (c.res.status >= 500) console.error(JSON.stringify(line));
    else console.log(JSON.stringify(line));
  };
}
