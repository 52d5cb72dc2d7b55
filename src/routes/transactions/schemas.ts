import { z } from "@hono/zod-openapi";
import { PROTOCOLS, TRANSACTION_STATUSES } from "../../db/schema.ts";
import { HistoryQueryShape, PaywallSummarySchema, RANGE_MESSAGE, rangeIsOrdered } from "../history-schemas.ts";
import { NetworkIdSchema } from "../schemas.ts";

export const TransactionSchema = z
  .object({
    id: z.string().openapi({ example: "txn_01hx3c9e7f2a" }),
    paywallId: z.string(),
    serviceId: z.string().nullable(),
    protocol: z.enum(PROTOCOLS),
    network: NetworkIdSchema,
    amount: z.string().openapi({ description: "Integer micro-USDC", example: "10000" }),
    currency: z.enum(["USDC"]),
    status: z.enum(TRANSACTION_STATUSES),
    payerAddress: z.string().nullable(),
    txHash: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: z.iso.datetime(),
    settledAt: z.iso.datetime().nullable(),
    Paywall: PaywallSummarySchema,
  })
  .openapi("Transaction");

export const TransactionListQuerySchema = z
  .strictObject({
    ...HistoryQueryShape,
    status: z.enum(TRANSACTION_STATUSES).optional(),
    network: NetworkIdSchema.optional(),
    protocol: z.enum(PROTOCOLS).optional(),
  })
  .refine(rangeIsOrdered, RANGE_MESSAGE);

export type Transaction = z.infer<typeof TransactionSchema>;
