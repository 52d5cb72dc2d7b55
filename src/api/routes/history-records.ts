import { z } from "@hono/zod-openapi";
import { type TransactionJson, toTransactionJson } from "../../core/transactions.ts";
import type { EventWithPaywall } from "../../db/events.ts";
import { EVENT_TYPES, PROTOCOLS, TOKENS, TRANSACTION_STATUSES } from "../../db/schema.ts";
import type { TransactionWithPaywall } from "../../db/transactions.ts";
import { NetworkIdSchema } from "./schemas.ts";

// The response form of history records (transactions and events).

export const PaywallSummarySchema = z
  .object({ id: z.string(), slug: z.string(), name: z.string() })
  .nullable()
  .openapi("PaywallSummary");

export const TransactionSchema = z
  .object({
    id: z.string().openapi({ example: "txn_01hx3c9e7f2a" }),
    paywallId: z.string(),
    serviceId: z.string().nullable(),
    protocol: z.enum(PROTOCOLS),
    network: NetworkIdSchema,
    amount: z.string().openapi({ description: "Integer micro-USDC", example: "10000" }),
    currency: z.enum(TOKENS).openapi({ description: "The token paid in: USDC, or pathUSD on tempo-testnet (6 decimals each)" }),
    status: z.enum(TRANSACTION_STATUSES),
    payerAddress: z.string().nullable(),
    txHash: z.string().nullable(),
    failureReason: z.string().nullable(),
    channelId: z.string().nullable().openapi({
      description:
        "A session's settlement: the channel (`GET /v1/channels/{id}`) whose charge it moved; null for a payment per call",
    }),
    createdAt: z.iso.datetime(),
    settledAt: z.iso.datetime().nullable(),
    Paywall: PaywallSummarySchema,
  })
  .openapi("Transaction");

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

export type Transaction = z.infer<typeof TransactionSchema>;
export type Event = z.infer<typeof EventSchema>;

/** The response form of a transaction (the one serializer, shared with webhook events). */
export const toTransaction = toTransactionJson as (row: TransactionWithPaywall) => Transaction;
// The shared form and this schema's must stay one: each must be assignable to the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameForm: Same<Omit<Transaction, "network">, Omit<TransactionJson, "network">> = true;
void sameForm;

/** The response form of an event, with the summary of its paywall (null once the paywall is deleted). */
export const toEvent = (row: EventWithPaywall): Event => ({
  id: row.id,
  paywallId: row.paywallId,
  serviceId: row.serviceId,
  eventType: row.eventType,
  statusCode: row.statusCode,
  responseTime: row.responseTime,
  amount: row.amount,
  metadata: row.metadata,
  createdAt: row.createdAt.toISOString(),
  // `Paywall` in PascalCase, as the specification names the paywalls a service embeds (see src/core/transactions.ts).
  Paywall: row.paywallSlug === null ? null : { id: row.paywallId, slug: row.paywallSlug, name: row.paywallName ?? "" },
});
