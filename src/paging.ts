import { z } from "@hono/zod-openapi";
import type { Pagination } from "./envelope.ts";

/** Which slice of a list: what the data-access functions take. */
export interface Page {
  limit: number;
  offset: number;
}

/** `limit` (1–100, default 20) and `offset` (≥ 0, default 0) of every list. */
export const PageQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .openapi({ type: "integer", minimum: 1, maximum: 100, default: 20, example: 20 }),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(0)
    .openapi({ type: "integer", minimum: 0, maximum: 1_000_000, default: 0, example: 0 }),
});

/** `meta.pagination` of a list response. */
export const pagination = (total: number, limit: number, offset: number): Pagination => ({
  total,
  limit,
  offset,
  hasMore: offset + limit < total,
});
