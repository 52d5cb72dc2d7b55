import { z } from "@hono/zod-openapi";
import { WebhookEventTypeSchema } from "../../../core/webhooks/endpoints.ts";
import { WEBHOOK_DELIVERY_STATUSES } from "../../../db/schema.ts";
import { PageQuerySchema } from "../../paging.ts";

// The request bodies live beside the rules that use them (src/core/webhooks/endpoints.ts), shared with the dashboard.
export {
  WebhookEndpointCreateSchema,
  WebhookEndpointUpdateSchema,
  WebhookEventTypeSchema,
} from "../../../core/webhooks/endpoints.ts";

export const WebhookEndpointSchema = z
  .object({
    id: z.string().openapi({ example: "we_3f9a0c1d2e4b5a6978c0d1e2" }),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(WebhookEventTypeSchema),
    enabled: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .openapi({ description: "Why the platform disabled the endpoint (a run of failed attempts); null otherwise" }),
    consecutiveFailures: z.int(),
    previousSecretExpiresAt: z.iso
      .datetime()
      .nullable()
      .openapi({ description: "Until when the secret before the last roll still signs deliveries" }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("WebhookEndpoint");

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().openapi({
    description:
      "The signing secret (`whsec_…`), shown only in this answer (an Idempotency-Key replay shows it masked). Verify deliveries with any Standard Webhooks library.",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  }),
}).openapi("WebhookEndpointWithSecret");

export const RollSecretSchema = z
  .strictObject({
    gracePeriodSeconds: z
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .default(24 * 3600)
      .openapi({
        description: "How long the current secret keeps signing deliveries beside the new one (0–7 days, default 24 h)",
      }),
  })
  .openapi("WebhookSecretRoll");

export const WebhookAttemptSchema = z
  .object({
    attempt: z.int(),
    at: z.iso.datetime(),
    ok: z.boolean(),
    responseStatus: z.int().nullable(),
    latencyMs: z.int().nullable(),
    responseBody: z.string().nullable().openapi({ description: "The first 256 bytes of a text answer" }),
    error: z.string().nullable(),
  })
  .openapi("WebhookAttempt");

export const WebhookDeliverySchema = z
  .object({
    id: z
      .string()
      .openapi({ description: "The `webhook-id` header of every attempt", example: "msg_x402_3f9a…_completed_we_3f9a…" }),
    endpointId: z.string(),
    eventType: z.string().openapi({ example: "transaction.completed" }),
    transactionId: z.string().nullable(),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.int(),
    lastAttemptAt: z.iso.datetime().nullable(),
    nextAttemptAt: z.iso.datetime().nullable().openapi({ description: "When the next attempt is due, while pending" }),
    responseStatus: z.int().nullable(),
    latencyMs: z.int().nullable(),
    responseBody: z.string().nullable().openapi({ description: "The first 256 bytes of the last text answer" }),
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
    attemptLog: z.array(WebhookAttemptSchema),
  })
  .openapi("WebhookDelivery");

export const DeliveryListQuerySchema = z.strictObject({
  ...PageQuerySchema.shape,
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
});

export const DeliveryParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" } }),
  deliveryId: z
    .string()
    .min(1)
    .max(160)
    .openapi({ param: { name: "deliveryId", in: "path" } }),
});
