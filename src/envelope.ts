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

export const ValidationIssueSchema = z
  .object({ path: z.string(), message: z.string() })
  .openapi("ValidationIssue", { example: { path: "name", message: "Too small: expected string to have >=1 characters" } });

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
