import type { Hook } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";
import { isDatabaseFailure } from "./db/errors.ts";
import { meta } from "./envelope.ts";
import { ApiError } from "./errors.ts";
import type { AppEnv } from "./types.ts";

export interface ValidationIssue {
  path: string;
  message: string;
}

/** One `{path, message}` per problem; an unknown field is named by its own path. */
export function validationIssues(error: ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue): ValidationIssue[] => {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: base ? `${base}.${key}` : key, message: "Unknown field" }));
    }
    return [{ path: base, message: issue.message }];
  });
}

/** The validation hook of every route: a failed schema becomes `400 VALIDATION_ERROR` with its issues. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) {
    throw new ApiError("VALIDATION_ERROR", "The request is not valid", { details: validationIssues(result.error as ZodError) });
  }
};

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

/** The one error renderer: `{ error, code, details?, meta }`. */
export function renderError(err: unknown, c: Context<AppEnv>): Response {
  const apiError = toApiError(err);
  if (!c.get("errorCode")) c.set("errorCode", apiError.code);
  for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
  const body = {
    error: apiError.message,
    code: apiError.code,
    ...(apiError.details === undefined ? {} : { details: apiError.details }),
    meta: meta(c),
  };
  return c.json(body, apiError.status as ContentfulStatusCode); // 499 is not in Hono's list of known statuses
}
