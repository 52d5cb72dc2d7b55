import { z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../../db/schema.ts";
import { MetaSchema, PaginationSchema } from "../../envelope.ts";
import { HistoryQueryShape, PaywallSummarySchema, RANGE_MESSAGE, rangeIsOrdered } from "../history-schemas.ts";

export const EventSchema = z
  .object({
    id: z.string().openapi({ example: "evt_01hx3c9e7f2a" }),
    paywallId: z.string(),
    serviceId: z.string().nullable(),
    eventType: z.enum(EVENT_TYPES),
    statusCode: z.int().nullable().openapi({ description: "Upstream HTTP status" }),
    responseTime: z.int().nullable().openapi({ description: "Upstream response time in milliseconds" }),
    amount: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime(),
    Paywall: PaywallSummarySchema,
  })
  .openapi("Event");

export const EventStatsSchema = z.object({ REQUEST: z.int(), SUCCESS: z.int(), ERROR: z.int() }).openapi("EventStats", {
  description: "Counts per eventType over the whole filtered set, not only this page",
});

export const EventListSchema = z.object({
  data: z.array(EventSchema),
  meta: MetaSchema.extend({ pagination: PaginationSchema, stats: EventStatsSchema }),
});

export const EventListQuerySchema = z
  .strictObject({ ...HistoryQueryShape, eventType: z.enum(EVENT_TYPES).optional() })
  .refine(rangeIsOrdered, RANGE_MESSAGE);

export type Event = z.infer<typeof EventSchema>;
