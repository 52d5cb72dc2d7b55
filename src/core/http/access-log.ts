import type { MiddlewareHandler } from "hono";
import type { ErrorCode } from "./errors.ts";
import type { RequestIdVariables } from "./request-id.ts";

/** The failure the request's log line names: an error code, or a cause more precise than the one the client sees. */
export type LoggedError =
  | ErrorCode
  | "RATE_LIMITER_UNAVAILABLE"
  | "CLIENT_RATE_LIMITED"
  | "CLIENT_ABORTED"
  | "API_KEY_IN_URL"
  | UpstreamFailure;

/** A tenant's upstream failed a paid request (its 5xx, a timeout, no connection): not a failure of ours. */
export type UpstreamFailure = "UPSTREAM_ERROR" | "UPSTREAM_TIMEOUT" | "UPSTREAM_UNREACHABLE";

/**
 * `errorCode`: set by whoever refuses the request (the error renderer, or a middleware with a more precise cause).
 * `challenge`: set by the payment flows when they answer a request that presented no payment with the paywall's `402`.
 */
export type AccessLogVariables = { errorCode?: LoggedError; challenge?: true };

/** Who the request acted for, when an app authenticated it (the API's key): ids only. */
type LoggedIdentity = { auth?: { keyId: string; tenant: { id: string } } };

/**
 * One structured JSON line per request. It names the key and tenant by id only: never a key, a body or a query string.
 * A payment challenge answered to a request that presented no payment is the one answer not logged: anybody may ask
 * for one, as often as they like, with no credential, and it moves nothing; Workers Logs' own record of each request
 * (its path, status and time) still has it, and a refused payment, a paid request and every failure are logged.
 */
export function accessLog(): MiddlewareHandler<{
  Variables: RequestIdVariables & AccessLogVariables & LoggedIdentity;
}> {
  return async function accessLog(c, next) {
    const start = performance.now();
    await next();
    if (c.var.challenge && c.res.status === 402) return;
    const { keyId, tenant } = c.var.auth ?? { keyId: null, tenant: null };
    const line = {
      requestId: c.var.requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - start) * 100) / 100,
      keyId,
      tenantId: tenant ? tenant.id : null,
      ...(c.var.errorCode ? { error: c.var.errorCode } : {}),
    };
    // Our own 5xx is an error; an upstream's failure passed on to its buyer is a warning, named as the upstream's.
    if (c.res.status >= 500 && !c.var.errorCode?.startsWith("UPSTREAM_")) console.error(JSON.stringify(line));
    else if (c.res.status >= 500) console.warn(JSON.stringify(line));
    else console.log(JSON.stringify(line));
  };
}
