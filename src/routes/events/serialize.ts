import type { EventWithPaywall } from "../../db/events.ts";
import type { Event } from "./schemas.ts";

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
  Paywall: row.paywallSlug === null ? null : { id: row.paywallId, slug: row.paywallSlug, name: row.paywallName ?? "" },
});
