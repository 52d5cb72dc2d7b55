import { z } from "@hono/zod-openapi";
import { PageQuerySchema } from "../paging.ts";

const Instant = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .openapi({ example: "2026-11-01T00:00:00Z" });

/** Pagination plus the filters every history list has: paywall, service and a createdAt range (inclusive). */
export const HistoryQueryShape = {
  ...PageQuerySchema.shape,
  paywallId: z.string().min(1).max(64).optional(),
  serviceId: z.string().min(1).max(64).optional(),
  from: Instant.optional(),
  to: Instant.optional(),
};

export const rangeIsOrdered = (q: { from?: Date | undefined; to?: Date | undefined }) => !q.from || !q.to || q.from <= q.to;
export const RANGE_MESSAGE = { message: "from must not be after to", path: ["from"] };
