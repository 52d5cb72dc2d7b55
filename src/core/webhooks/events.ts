// Webhook events: their types, their ids, and the body every delivery sends (Standard Webhooks: `{type, timestamp, data}`).
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../../db/schema.ts";

export { WEBHOOK_EVENT_TYPES, type WebhookEventType };

/** Every type a delivery can carry: the subscribable ones and `test` (sent on demand). */
export type WebhookDeliveryType = WebhookEventType | "test";

/**
 * The prefix of the delivery ids of a transaction's event, one per endpoint (`<prefix><endpoint id>`): derived from
 * the transaction and the event, so the same move recorded twice never makes a second delivery.
 */
export const transactionDeliveryIdPrefix = (transactionId: string, type: WebhookEventType) =>
  `msg_${transactionId.replace(/^txn_/, "")}_${type.replace(/^transaction\./, "")}_`;

/** The body of a delivery: the event's type, when it happened, and its data. */
export const eventBody = (type: WebhookDeliveryType, at: Date, data: unknown): string =>
  JSON.stringify({ type, timestamp: at.toISOString(), data });
