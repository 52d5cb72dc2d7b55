import type { z } from "@hono/zod-openapi";
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from "../../../db/schema.ts";
import type { WebhookDeliverySchema, WebhookEndpointSchema } from "./schemas.ts";

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const toWebhookEndpoint = (row: WebhookEndpointRow): z.infer<typeof WebhookEndpointSchema> => ({
  id: row.id,
  url: row.url,
  description: row.description,
  events: row.events,
  enabled: row.enabled,
  disabledReason: row.disabledReason,
  consecutiveFailures: row.consecutiveFailures,
  previousSecretExpiresAt: iso(row.previousSecretExpiresAt),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export const toWebhookDelivery = (
  row: WebhookDeliveryRow,
  attempts: WebhookAttemptRow[],
): z.infer<typeof WebhookDeliverySchema> => ({
  id: row.id,
  endpointId: row.endpointId,
  eventType: row.eventType,
  transactionId: row.transactionId,
  status: row.status,
  attempts: row.attempts,
  lastAttemptAt: iso(row.lastAttemptAt),
  nextAttemptAt: row.status === "pending" ? iso(row.nextAttemptAt) : null,
  responseStatus: row.responseStatus,
  latencyMs: row.latencyMs,
  responseBody: row.responseBody,
  error: row.error,
  createdAt: row.createdAt.toISOString(),
  attemptLog: attempts.map((a) => ({
    attempt: a.attempt,
    at: a.createdAt.toISOString(),
    ok: a.ok,
    responseStatus: a.responseStatus,
    latencyMs: a.latencyMs,
    responseBody: a.responseBody,
    error: a.error,
  })),
});
