import { z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../../../db/schema.ts";
import { MetaSchema, PaginationSchema } from "../../envelope.ts";
import { EventSchema } from "../history-records.ts";
import { HistoryQueryShape, RANGE_MESSAGE, rangeIsOrdered } from "../history-schemas.ts";

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
