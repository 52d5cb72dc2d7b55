import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isDatabaseFailure } from "../../db/errors.ts";
import type { AccessLogVariables } from "./access-log.ts";
import { ApiError } from "./errors.ts";
import type { RequestIdVariables } from "./request-id.ts";

/** Maps anything thrown to the one error type. Unknown errors become a generic 500: no message, no stack. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 400) return new ApiError("VALIDATION_ERROR", "Malformed JSON in request body");
    if (err.status === 413) return new ApiError("VALIDATION_ERROR", "Request body too large", { status: 413 });
    if (err.status === 415) {
      return new ApiError("VALIDATION_ERROR", "Request body must be JSON (Content-Type: application/json)", { status: 415 });
    }
  }
  if (isDatabaseFailure(err)) return new ApiError("DATABASE_ERROR", "A database error occurred; retry the request");
  return new ApiError("INTERNAL_ERROR", "An internal error occurred");
}

/** The `meta` of every body, from any context that holds a request id. */
export const meta = (c: { var: RequestIdVariables }) => ({ requestId: c.var.requestId, timestamp: new Date().toISOString() });

/** The one error renderer: `{ error, code, details?, meta }`. */
export function renderError<E extends { Variables: RequestIdVariables & AccessLogVariables }>(
  err: unknown,
  c: Context<E>,
): Response {
  const apiError = toApiError(err);
  if (!c.var.errorCode) c.set("errorCode", apiError.code);
  for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
  const body = {
    error: apiError.message,
    code: apiError.code,
    ...(apiError.details === undefined ? {} : { details: apiError.details }),
    meta: meta(c),
  };
  return c.json(body, apiError.status as ContentfulStatusCode); // 499 is not in Hono's list of known statuses
}
