import { z } from "@hono/zod-openapi";
import type { Pagination } from "./envelope.ts";

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

/** `meta.pagination` of a list response. */
export const pagination = (total: number, limit: number, offset: number): Pagination => ({
  total,
  limit,
  offset,
  hasMore: offset + limit < total,
});
