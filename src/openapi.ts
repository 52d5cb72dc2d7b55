import type { RouteConfig } from "@hono/zod-openapi";
import { ErrorSchema } from "./envelope.ts";
import { ERROR_STATUS, type ErrorCode } from "./errors.ts";

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict",
  413: "Payload too large",
  415: "Unsupported media type",
  429: "Too many requests",
  500: "Server error",
  503: "Service unavailable",
};

/** Errors every authenticated route can return, before its handler runs. */
export const AUTH_ERRORS = [
  "INVALID_API_KEY",
  "KEY_REVOKED",
  "KEY_EXPIRED",
  "KEY_INACTIVE",
  "IP_NOT_ALLOWED",
  "RATE_LIMITED",
  "NOT_FOUND",
  "INTERNAL_ERROR",
  "DATABASE_ERROR",
  "SERVICE_UNAVAILABLE",
] as const satisfies ErrorCode[];

/** Errors every route behind a scope can return. */
export const SCOPED_ERRORS = [...AUTH_ERRORS, "INSUFFICIENT_SCOPE"] as const satisfies ErrorCode[];

/**
 * OpenAPI `responses` for a set of error codes, grouped by status from the one code→status table.
 * Bodies carry a 413 (too large) and 415 (not JSON) besides 400 when `body` is set.
 */
export function errorResponses(codes: readonly ErrorCode[], options: { body?: boolean } = {}): RouteConfig["responses"] {
  const byStatus = new Map<number, Set<ErrorCode>>();
  const add = (status: number, code: ErrorCode) => byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
  for (const code of codes) add(ERROR_STATUS[code], code);
  if (options.body) {
    add(400, "VALIDATION_ERROR");
    add(413, "VALIDATION_ERROR");
    add(415, "VALIDATION_ERROR");
  }
  const responses: RouteConfig["responses"] = {};
  for (const [status, set] of [...byStatus].sort(([a], [b]) => a - b)) {
    const list = [...set];
    responses[status] = {
      description: `${STATUS_TEXT[status] ?? "Error"}: ${list.join(", ")}`,
      content: { "application/json": { schema: ErrorSchema } },
      ...(status === 429 || status === 503
        ? { headers: { "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } } } }
        : {}),
    };
  }
  return responses;
}

/** A JSON body or response with this schema. */
export const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

export const API_KEY_SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
