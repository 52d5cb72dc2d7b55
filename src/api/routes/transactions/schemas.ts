import { z } from "@hono/zod-openapi";
import { PROTOCOLS, TRANSACTION_STATUSES } from "../../../db/schema.ts";
import { HistoryQueryShape, RANGE_MESSAGE, rangeIsOrdered } from "../history-schemas.ts";
import { NetworkIdSchema } from "../schemas.ts";

export const TransactionListQuerySchema = z
  .strictObject({
    ...HistoryQueryShape,
    status: z.enum(TRANSACTION_STATUSES).optional(),
    network: NetworkIdSchema.optional(),
    protocol: z.enum(PROTOCOLS).optional(),
  })
  .refine(rangeIsOrdered, RANGE_MESSAGE);
