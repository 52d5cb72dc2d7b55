import { z } from "@hono/zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "../core/http/errors.ts";
import { SCOPES } from "../core/keys/scopes.ts";

export const MetaSchema = z
  .object({
    requestId: z.string().openapi({ example: "req_9f2c4e1ab37d4c0e8d1f6a2b" }),
    timestamp: z.iso.datetime().openapi({ example: "2026-11-22T10:00:00.000Z" }),
  })
  .openapi("Meta");

export const PaginationSchema = z
  .object({
    total: z.int().nonnegative(),
    limit: z.int().min(1).max(100),
    offset: z.int().nonnegative(),
    hasMore: z.boolean(),
  })
  .openapi("Pagination");

const IssueSchema = z
  .object({
    path: z
      .string()
      .openapi({ description: 'The field, dotted (`authConfig.bearerToken`, `networks.0`); "" for the whole body' }),
    message: z.string(),
  })
  .openapi("Issue");

/** The shape of `details` for each code that carries one; every other code has no `details`. */
const ERROR_DETAILS = {
  VALIDATION_ERROR: z.array(IssueSchema).openapi("ValidationErrorDetails", { description: "One entry per problem" }),
  SSRF_BLOCKED: z
    .object({
      field: z.string().openapi({ description: "The refused field", example: "baseUrl" }),
      reason: z.string().openapi({ description: "Why it was refused", example: "private_address" }),
    })
    .openapi("SsrfBlockedDetails"),
  INVALID_SERVICE: z.object({ serviceId: z.string() }).openapi("InvalidServiceDetails"),
  INSUFFICIENT_SCOPE: z
    .object({
      required: z.enum(SCOPES).openapi({ description: "The route's scope" }),
      granted: z.array(z.string()).openapi({ description: "The key's scopes" }),
    })
    .openapi("InsufficientScopeDetails"),
} satisfies Partial<Record<ErrorCode, z.ZodType>>;

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: "Human-readable message" }),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    details: z
      .union([
        ERROR_DETAILS.VALIDATION_ERROR,
        ERROR_DETAILS.SSRF_BLOCKED,
        ERROR_DETAILS.INVALID_SERVICE,
        ERROR_DETAILS.INSUFFICIENT_SCOPE,
      ])
      .optional()
      .openapi({
        description:
          "Present for four codes only: `VALIDATION_ERROR` → a list of `{path, message}` (absent for 413 and 415); `SSRF_BLOCKED` → `{field, reason}`; `INVALID_SERVICE` → `{serviceId}`; `INSUFFICIENT_SCOPE` → `{required, granted}`.",
      }),
    meta: MetaSchema,
  })
  .openapi("Error");

export type Meta = z.infer<typeof MetaSchema>;
export type Pagination = z.infer<typeof PaginationSchema>;

export { meta } from "../core/http/render.ts";

/** Success envelope schema: `{ data, meta }`. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ data, meta: MetaSchema });

/** List envelope schema: `{ data: [...], meta: { pagination } }`. */
export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), meta: MetaSchema.extend({ pagination: PaginationSchema }) });

/** `{ id, deleted: true }`, the body of every DELETE. */
export const DeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).openapi("Deleted");
