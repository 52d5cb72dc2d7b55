import type { Issue } from "../../lib/issues.ts";

/** Every error code the API returns, with its HTTP status. The runtime and the OpenAPI document both read this table. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  SSRF_BLOCKED: 400,
  INVALID_WALLET: 400,
  INVALID_SERVICE: 400,
  INVALID_API_KEY: 401,
  KEY_REVOKED: 401,
  KEY_EXPIRED: 401,
  KEY_INACTIVE: 401,
  INSUFFICIENT_SCOPE: 403,
  IP_NOT_ALLOWED: 403,
  FORBIDDEN: 403,
  BETA_LIMIT_SERVICES: 403,
  BETA_LIMIT_PAYWALLS: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  KEY_LIMIT_REACHED: 409,
  WEBHOOK_ENDPOINT_LIMIT: 409,
  ALREADY_REVOKED: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  PRECONDITION_FAILED: 412,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  DATABASE_ERROR: 500,
  BAD_GATEWAY: 502,
  PAYMENT_OUTCOME_UNKNOWN: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
/** 413 and 415 refine VALIDATION_ERROR; 499 marks a client that disconnected before its body arrived (logged only). */
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode] | 413 | 415 | 499;

/** The status a request is logged with when its client went away before its body arrived (nginx's convention). */
export const CLIENT_ABORT_STATUS = 499;

/** One entry of `details`: an issue, with a machine-readable `reason` where the code has one (SSRF_BLOCKED, scope). */
export interface Detail extends Issue {
  reason?: string;
}

export interface ErrorOptions {
  /** Always a list of `{path, message}`; the gateway's payment refusals (pipeline/known.ts) still carry their own object. */
  details?: readonly Detail[] | Record<string, string>;
  /** Overrides the table's status where HTTP has a more precise one (413, 415, 499) for the same code. */
  status?: ErrorStatus;
  headers?: Record<string, string>;
}

/** The one error type handlers throw; `app.onError` renders it. Its message is shown to the client, so it never holds secrets. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

/** `400 VALIDATION_ERROR` listing its issues: the one constructor of a validation refusal. */
export const invalid = (issues: Issue[], message = "The request is not valid") =>
  new ApiError("VALIDATION_ERROR", message, { details: issues });

export const notFound = (what: string) => new ApiError("NOT_FOUND", `${what} not found`);
export const forbidden = (what: string) => new ApiError("FORBIDDEN", `This ${what} belongs to another tenant`);
