import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ERROR_STATUS, type ErrorCode } from "./errors.ts";

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

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: "Human-readable message" }),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    details: z.unknown().optional().openapi({ description: "Machine-readable detail, e.g. a list of validation issues" }),
    meta: MetaSchema,
  })
  .openapi("Error");

export type Meta = z.infer<typeof MetaSchema>;
export type Pagination = z.infer<typeof PaginationSchema>;

export const meta = (c: Context): Meta => ({ requestId: c.get("requestId") as string, timestamp: new Date().toISOString() });

/** Success envelope schema: `{ data, meta }`. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ data, meta: MetaSchema });

/** List envelope schema: `{ data: [...], meta: { pagination } }`. */
export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), meta: MetaSchema.extend({ pagination: PaginationSchema }) });

export const pagination = (total: number, limit: number, offset: number): Pagination => ({
  total,
  limit,
  offset,
  hasMore: offset + limit < total,
});

/**
 * A query integer in its one canonical spelling: decimal digits, no sign, no leading zero, no exponent, no fraction,
 * no spaces (`0x10`, `1e2`, `+5`, `05`, `5.0` and ` 5` are refused rather than guessed at).
 */
const QueryIntSchema = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, "Must be a whole number in plain decimal digits (no sign, leading zero, exponent or spaces)")
    .transform(Number)
    .pipe(z.int().min(min).max(max))
    .default(fallback)
    .openapi({ type: "integer", minimum: min, maximum: max, default: fallback, example: fallback });

/** `limit` (1–100, default 20) and `offset` (0–1,000,000, default 0) of every list. */
export const PageQuerySchema = z.object({
  limit: QueryIntSchema(1, 100, 20),
  offset: QueryIntSchema(0, 1_000_000, 0),
});

/** `{ id, deleted: true }`, the body of every DELETE. */
export const DeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).openapi("Deleted");

export const IdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" } }),
});
