import { createRoute, type OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "../core/http/errors.ts";
import type { Scope } from "../core/keys/scopes.ts";
import { ErrorSchema } from "./envelope.ts";
import { requireScope } from "./middleware/auth.ts";
import { readJsonBody } from "./middleware/request-guards.ts";

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  409: "Conflict",
  412: "Precondition failed",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Unprocessable content",
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

const RATE_LIMITED_WHEN =
  "The numbers of the bucket that counted the request: its API key once the key is authenticated; its client address (`CF-Connecting-IP`) for an operation without a key (`/v1/health`) and for a request refused with `401`. Absent from the refusals made before any count: a key in the URL (`400`), a declared `Content-Length` over the limit (`413`), a key used outside its IP allowlist (`403 IP_NOT_ALLOWED`).";

/** The response headers the API sends, declared once under `components.headers`. */
const HEADERS = {
  "X-Request-Id": {
    description: "The request's id (`req_…`), also `meta.requestId` and in the request's log line",
    schema: { type: "string", example: "req_9f2c4e1ab37d4c0e8d1f6a2b" },
  },
  "RateLimit-Limit": {
    description: `Requests allowed per window. ${RATE_LIMITED_WHEN}`,
    schema: { type: "integer", minimum: 1 },
  },
  "RateLimit-Remaining": {
    description: `Requests left in the current window. ${RATE_LIMITED_WHEN}`,
    schema: { type: "integer", minimum: 0 },
  },
  "RateLimit-Reset": {
    description: `Seconds until the window resets. ${RATE_LIMITED_WHEN}`,
    schema: { type: "integer", minimum: 1 },
  },
  "Retry-After": {
    description: "Seconds to wait before retrying (on 429, 503, and 409 `IDEMPOTENCY_IN_PROGRESS`)",
    schema: { type: "integer", minimum: 1 },
  },
  "Idempotent-Replayed": {
    description:
      "`true` when this answer is the stored answer of an earlier request with the same `Idempotency-Key`, replayed: nothing was written this time. Absent otherwise.",
    schema: { type: "string", const: "true", example: "true" },
  },
  ETag: {
    description:
      'The strong entity tag of what the URL answers: `"v<version>"` for a service or paywall, `"c<hash>"` for one transaction, event, webhook endpoint or discovery preview (of what it holds), `"l<hash>"` for a page of a list (its total and every item it shows). It changes whenever that does; send it back in `If-None-Match` to get `304` while it is unchanged, or (a service or paywall) in `If-Match` to write only that state',
    schema: { type: "string", example: '"v3"' },
  },
  "WWW-Authenticate": {
    description: 'The authentication challenge: `Bearer realm="api"`, with `error="invalid_token"` when a key was sent',
    schema: { type: "string", example: 'Bearer realm="api", error="invalid_token"' },
  },
} as const;
type HeaderName = keyof typeof HEADERS;

const RATE_LIMIT_HEADERS: HeaderName[] = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];

/** The headers a response with this status carries. */
function headersFor(status: number): HeaderName[] {
  const names: HeaderName[] = ["X-Request-Id"];
  // On every 2xx and 4xx; the headers' text says which refusals come before any count. A 5xx may come before it too.
  if (status < 500) names.push(...RATE_LIMIT_HEADERS);
  if (status === 429 || status === 503 || status === 409) names.push("Retry-After");
  if (status === 401) names.push("WWW-Authenticate");
  if (status === 412) names.push("ETag");
  return names;
}

/** Security schemes and response headers, registered once for the document. */
export function registerComponents(registry: OpenAPIHono["openAPIRegistry"]) {
  registry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "`Authorization: Bearer mpk_…`",
  });
  registry.registerComponent("securitySchemes", "apiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "`X-Api-Key: mpk_…`",
  });
  for (const [name, header] of Object.entries(HEADERS)) registry.registerComponent("headers", name, header);
}

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
    responses[status] = {
      description: `${STATUS_TEXT[status] ?? "Error"}: ${[...set].join(", ")}`,
      content: { "application/json": { schema: ErrorSchema } },
    };
  }
  return responses;
}

/** Declares on every response the headers its status carries. */
function withHeaders<T extends RouteConfig["responses"]>(responses: T): T {
  const out: RouteConfig["responses"] = {};
  for (const [status, response] of Object.entries(responses)) {
    const refs = headersFor(Number(status)).map((name) => [name, { $ref: `#/components/headers/${name}` }]);
    const own = "headers" in response ? response.headers : undefined;
    out[status] = { ...response, headers: { ...own, ...Object.fromEntries(refs) } };
  }
  return out as T;
}

/** The `ETag` header of a response about one service or paywall. */
export const ETAG_HEADERS = { ETag: { $ref: "#/components/headers/ETag" } };

/** The `ETag` header of a list page, and the `304` a list answers to an `If-None-Match` naming it. */
export const LIST_ETAG_HEADERS = { ETag: { $ref: "#/components/headers/ETag" } };
/** The `304` one resource answers to an `If-None-Match` naming its `ETag`. */
export const ITEM_NOT_MODIFIED = {
  304: { description: "Not modified: still at the `ETag` sent in `If-None-Match`", headers: ETAG_HEADERS },
};
export const LIST_NOT_MODIFIED = {
  304: { description: "Not modified: the page is still at the `ETag` sent in `If-None-Match`", headers: LIST_ETAG_HEADERS },
};

/** The conditional request headers of a write (`If-Match`) and a read (`If-None-Match`) of one resource. */
export const IfMatchHeadersSchema = z.object({
  "if-match": z.string().optional().openapi({
    description:
      'Writes only if the resource is still at this state: its `ETag` (e.g. `"v3"`), a list of them, or `*`. Otherwise `412 PRECONDITION_FAILED` and nothing changes.',
    example: '"v3"',
  }),
});
export const IfNoneMatchHeadersSchema = z.object({
  "if-none-match": z.string().optional().openapi({
    description: "Answers `304 Not Modified` (no body) while the resource is still at this `ETag`.",
    example: '"v3"',
  }),
});

export const ListIfNoneMatchHeadersSchema = z.object({
  "if-none-match": z.string().optional().openapi({
    description: "Answers `304 Not Modified` (no body) while the page is still at this `ETag`.",
    example: '"l3f9a0c6e2b7d41d8a5e0f1c2b3a4d5e6"',
  }),
});

/** A JSON body or response with this schema. */
export const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

export const API_KEY_SECURITY: Record<string, string[]>[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** What every operation states: a stable camelCase `operationId`; `errors` lists the codes of its own handler. */
type OperationConfig = Omit<RouteConfig, "security" | "middleware" | "operationId"> & {
  operationId: string;
  errors?: readonly ErrorCode[];
};

/**
 * An operation that answers without an API key (`security: []`), counted per client address (app.ts mounts
 * `clientRateLimit` on it): `429 RATE_LIMITED` over the address's limit.
 */
export function publicRoute<const C extends OperationConfig>({ errors = [], ...config }: C) {
  return createRoute({
    ...config,
    security: [],
    responses: withHeaders({ ...config.responses, ...errorResponses(["RATE_LIMITED", ...errors]) }),
  });
}

/**
 * An operation any valid API key may call, whatever its scopes. An operation with a body reads it here, after
 * authentication (app.ts), never before.
 */
export function authenticatedRoute<const C extends OperationConfig>({ errors = [], ...config }: C) {
  return createRoute({
    ...config,
    security: API_KEY_SECURITY,
    middleware: config.request?.body ? [readJsonBody()] : [],
    responses: withHeaders({
      ...config.responses,
      ...errorResponses([...AUTH_ERRORS, ...errors], { body: Boolean(config.request?.body) }),
    }),
  });
}

/**
 * An operation behind a scope, declared once: the security requirement, the runtime scope check, the scoped error
 * responses, the "Scope:" sentence of its description, and `x-scope`, which tests read to check the runtime agrees.
 * The scope is decided before the body is read: a key without the scope gets `403` whatever it sends (only a declared
 * `Content-Length` over the limit is refused earlier, with `413`, for every caller alike: app.ts).
 */
export function scopedRoute<const C extends OperationConfig>(scope: Scope, { errors = [], ...config }: C) {
  return createRoute({
    ...config,
    description: `${config.description ? `${config.description} ` : ""}Scope: \`${scope}\`.`,
    security: API_KEY_SECURITY,
    middleware: config.request?.body ? [requireScope(scope), readJsonBody()] : [requireScope(scope)],
    "x-scope": scope,
    responses: withHeaders({
      ...config.responses,
      ...errorResponses([...SCOPED_ERRORS, ...errors], { body: Boolean(config.request?.body) }),
    }),
  });
}
