import { DeletedSchema, envelope, listEnvelope } from "../../envelope.ts";
import { IDEMPOTENCY_ERRORS, IdempotencyHeadersSchema, REPLAYED_HEADERS } from "../../middleware/idempotency.ts";
import {
  ETAG_HEADERS,
  IfNoneMatchHeadersSchema,
  ITEM_NOT_MODIFIED,
  json,
  LIST_ETAG_HEADERS,
  LIST_NOT_MODIFIED,
  ListIfNoneMatchHeadersSchema,
  scopedRoute,
} from "../../openapi.ts";
import { PageQuerySchema } from "../../paging.ts";
import { IdParamSchema } from "../schemas.ts";
import {
  DeliveryListQuerySchema,
  DeliveryParamSchema,
  RollSecretSchema,
  WebhookDeliverySchema,
  WebhookEndpointCreateSchema,
  WebhookEndpointSchema,
  WebhookEndpointUpdateSchema,
  WebhookEndpointWithSecretSchema,
} from "./schemas.ts";

const tags = ["Webhooks"];
const writeHeaders = IdempotencyHeadersSchema;

export const createWebhookEndpoint = scopedRoute("webhooks:write", {
  operationId: "createWebhookEndpoint",
  method: "post",
  path: "/webhook-endpoints",
  tags,
  summary: "Create a webhook endpoint",
  description:
    "Registers a URL that receives the chosen events, signed the Standard Webhooks way. The answer holds the signing `secret`, shown this once.",
  request: { headers: writeHeaders, body: { ...json(WebhookEndpointCreateSchema), required: true } },
  responses: {
    201: {
      description: "The new endpoint and its signing secret",
      headers: REPLAYED_HEADERS,
      ...json(envelope(WebhookEndpointWithSecretSchema)),
    },
  },
  errors: ["VALIDATION_ERROR", "SSRF_BLOCKED", "WEBHOOK_ENDPOINT_LIMIT", ...IDEMPOTENCY_ERRORS],
});

export const listWebhookEndpoints = scopedRoute("webhooks:read", {
  operationId: "listWebhookEndpoints",
  method: "get",
  path: "/webhook-endpoints",
  tags,
  summary: "List webhook endpoints",
  description: "Newest first.",
  request: { query: PageQuerySchema.strict(), headers: ListIfNoneMatchHeadersSchema },
  responses: {
    200: { description: "A page of endpoints", headers: LIST_ETAG_HEADERS, ...json(listEnvelope(WebhookEndpointSchema)) },
    ...LIST_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR"],
});

export const getWebhookEndpoint = scopedRoute("webhooks:read", {
  operationId: "getWebhookEndpoint",
  method: "get",
  path: "/webhook-endpoints/{id}",
  tags,
  summary: "Get a webhook endpoint",
  description: "Another tenant's endpoint is answered 404, as one that does not exist.",
  request: { params: IdParamSchema, headers: IfNoneMatchHeadersSchema },
  responses: {
    200: { description: "The endpoint", headers: ETAG_HEADERS, ...json(envelope(WebhookEndpointSchema)) },
    ...ITEM_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "NOT_FOUND"],
});

export const updateWebhookEndpoint = scopedRoute("webhooks:write", {
  operationId: "updateWebhookEndpoint",
  method: "patch",
  path: "/webhook-endpoints/{id}",
  tags,
  summary: "Update a webhook endpoint",
  description:
    "Partial update of `url`, `events`, `description`, `enabled`. `enabled: true` re-enables an endpoint the platform disabled after a run of failed attempts, and resets that run.",
  request: { params: IdParamSchema, headers: writeHeaders, body: { ...json(WebhookEndpointUpdateSchema), required: true } },
  responses: {
    200: { description: "The updated endpoint", headers: REPLAYED_HEADERS, ...json(envelope(WebhookEndpointSchema)) },
  },
  errors: ["VALIDATION_ERROR", "SSRF_BLOCKED", "NOT_FOUND", ...IDEMPOTENCY_ERRORS],
});

export const deleteWebhookEndpoint = scopedRoute("webhooks:write", {
  operationId: "deleteWebhookEndpoint",
  method: "delete",
  path: "/webhook-endpoints/{id}",
  tags,
  summary: "Delete a webhook endpoint",
  description: "Deletes the endpoint with its delivery log; deliveries still queued are dropped.",
  request: { params: IdParamSchema, headers: writeHeaders },
  responses: { 200: { description: "Deleted", headers: REPLAYED_HEADERS, ...json(envelope(DeletedSchema)) } },
  errors: ["VALIDATION_ERROR", "NOT_FOUND", ...IDEMPOTENCY_ERRORS],
});

export const rollWebhookSecret = scopedRoute("webhooks:write", {
  operationId: "rollWebhookSecret",
  method: "post",
  path: "/webhook-endpoints/{id}/secret/roll",
  tags,
  summary: "Roll an endpoint's signing secret",
  description:
    "Makes a new secret (shown this once). For `gracePeriodSeconds` the old one keeps signing too: each delivery then carries two `v1,` signatures, and a receiver holding either secret verifies it.",
  request: { params: IdParamSchema, headers: writeHeaders, body: { ...json(RollSecretSchema), required: true } },
  responses: {
    200: {
      description: "The endpoint and its new signing secret",
      headers: REPLAYED_HEADERS,
      ...json(envelope(WebhookEndpointWithSecretSchema)),
    },
  },
  errors: ["VALIDATION_ERROR", "NOT_FOUND", ...IDEMPOTENCY_ERRORS],
});

export const sendTestWebhook = scopedRoute("webhooks:write", {
  operationId: "sendTestWebhook",
  method: "post",
  path: "/webhook-endpoints/{id}/test",
  tags,
  summary: "Send a test event",
  description:
    "Queues a `test` event to the endpoint (even a disabled one stays disabled: enable it first). Its delivery shows in the log like any other.",
  request: { params: IdParamSchema, headers: writeHeaders },
  responses: {
    202: { description: "The queued delivery", headers: REPLAYED_HEADERS, ...json(envelope(WebhookDeliverySchema)) },
  },
  errors: ["VALIDATION_ERROR", "NOT_FOUND", ...IDEMPOTENCY_ERRORS],
});

export const listWebhookDeliveries = scopedRoute("webhooks:read", {
  operationId: "listWebhookDeliveries",
  method: "get",
  path: "/webhook-endpoints/{id}/deliveries",
  tags,
  summary: "List an endpoint's deliveries",
  description:
    "The delivery log, newest first: each event sent to the endpoint, its status (`pending`, `delivered`, `failed`), its attempts with latency, response status and the first bytes of the answer, and when the next attempt is due.",
  request: { params: IdParamSchema, query: DeliveryListQuerySchema, headers: ListIfNoneMatchHeadersSchema },
  responses: {
    200: { description: "A page of deliveries", headers: LIST_ETAG_HEADERS, ...json(listEnvelope(WebhookDeliverySchema)) },
    ...LIST_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "NOT_FOUND"],
});

export const retryWebhookDelivery = scopedRoute("webhooks:write", {
  operationId: "retryWebhookDelivery",
  method: "post",
  path: "/webhook-endpoints/{id}/deliveries/{deliveryId}/retry",
  tags,
  summary: "Retry a delivery",
  description:
    "Sends the delivery again now, with the same `webhook-id` and body (a delivered one too: receivers deduplicate by id). The endpoint must be enabled.",
  request: { params: DeliveryParamSchema, headers: writeHeaders },
  responses: {
    202: { description: "The delivery, queued", headers: REPLAYED_HEADERS, ...json(envelope(WebhookDeliverySchema)) },
  },
  errors: ["VALIDATION_ERROR", "NOT_FOUND", "CONFLICT", ...IDEMPOTENCY_ERRORS],
});
