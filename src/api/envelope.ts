import { z } from "@hono/zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "../core/http/errors.ts";

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
    reason: z.string().optional().openapi({
      description:
        "A machine-readable reason, for two codes: `SSRF_BLOCKED` (why the URL was refused, e.g. `private_address`) and `INSUFFICIENT_SCOPE` (the scope the operation needs)",
      example: "private_address",
    }),
  })
  .openapi("Issue");

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: "Human-readable message" }),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    details: z.array(IssueSchema).optional().openapi({
      description:
        "Always a list of `{path, message}`, one entry per problem, when present: `VALIDATION_ERROR` (absent for 413 and 415), `SSRF_BLOCKED` (the refused field, with `reason`), `INVALID_SERVICE` (`serviceId`), `INSUFFICIENT_SCOPE` (with the needed scope as `reason`), `PRECONDITION_FAILED`.",
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
