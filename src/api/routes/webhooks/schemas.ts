import { z } from "@hono/zod-openapi";
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES } from "../../../db/schema.ts";
import { PageQuerySchema } from "../../paging.ts";
import { TextSchema, UrlSchema } from "../schemas.ts";

export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES).openapi("WebhookEventType");

const EventListSchema = z
  .array(WebhookEventTypeSchema)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((list) => new Set(list).size === list.length, { message: "Event types must not repeat" })
  .openapi({ uniqueItems: true, description: "The event types sent to this endpoint" });

const UrlField = UrlSchema.openapi({
  description:
    "Where events are POSTed: a public http(s) URL (the rules of upstream URLs; private and internal addresses are refused, at creation and before every attempt). Redirects are not followed.",
  example: "https://hooks.example.com/paywall",
});

export const WebhookEndpointCreateSchema = z
  .strictObject({
    url: UrlField,
    events: EventListSchema,
    description: TextSchema(500).optional(),
  })
  .openapi("WebhookEndpointCreate");

export const WebhookEndpointUpdateSchema = z
  .strictObject({
    url: UrlField.optional(),
    events: EventListSchema.optional(),
    description: TextSchema(500).nullable().optional(),
    enabled: z.boolean().optional().openapi({
      description: "false pauses deliveries; true re-enables an endpoint (also one the platform disabled after failures)",
    }),
  })
  .openapi("WebhookEndpointUpdate");

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
