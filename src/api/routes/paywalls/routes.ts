import { DeletedSchema, envelope, listEnvelope } from "../../envelope.ts";
import { IDEMPOTENCY_ERRORS, IdempotencyHeadersSchema, REPLAYED_HEADERS } from "../../middleware/idempotency.ts";
import {
  ETAG_HEADERS,
  IfMatchHeadersSchema,
  IfNoneMatchHeadersSchema,
  json,
  LIST_ETAG_HEADERS,
  LIST_NOT_MODIFIED,
  ListIfNoneMatchHeadersSchema,
  scopedRoute,
} from "../../openapi.ts";
import { IdParamSchema } from "../schemas.ts";
import { PaywallCreateSchema, PaywallListQuerySchema, PaywallSchema, PaywallUpdateSchema } from "./schemas.ts";

const tags = ["Paywalls"];

export const createPaywall = scopedRoute("paywalls:write", {
  operationId: "createPaywall",
  method: "post",
  path: "/paywalls",
  tags,
  summary: "Create a paywall",
  description:
    "Prices a route. `merchantWallet` is set to the tenant's primary wallet; networks must match the service's mode. A slug already used in the service is `409 CONFLICT`.",
  request: { headers: IdempotencyHeadersSchema, body: { ...json(PaywallCreateSchema), required: true } },
  responses: {
    201: { description: "The new paywall", headers: { ...ETAG_HEADERS, ...REPLAYED_HEADERS }, ...json(envelope(PaywallSchema)) },
  },
  errors: ["VALIDATION_ERROR", "SSRF_BLOCKED", "INVALID_SERVICE", "CONFLICT", "BETA_LIMIT_PAYWALLS", ...IDEMPOTENCY_ERRORS],
});

export const listPaywalls = scopedRoute("paywalls:read", {
  operationId: "listPaywalls",
  method: "get",
  path: "/paywalls",
  tags,
  summary: "List paywalls",
  description: "Newest first; filter by `serviceId` and `enabled`.",
  request: { query: PaywallListQuerySchema, headers: ListIfNoneMatchHeadersSchema },
  responses: {
    200: { description: "A page of paywalls", headers: LIST_ETAG_HEADERS, ...json(listEnvelope(PaywallSchema)) },
    ...LIST_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
});

export const getPaywall = scopedRoute("paywalls:read", {
  operationId: "getPaywall",
  method: "get",
  path: "/paywalls/{id}",
  tags,
  summary: "Get a paywall",
  request: { params: IdParamSchema, headers: IfNoneMatchHeadersSchema },
  responses: {
    200: { description: "The paywall", headers: ETAG_HEADERS, ...json(envelope(PaywallSchema)) },
    304: { description: "Not modified: still at the `ETag` sent in `If-None-Match`", headers: ETAG_HEADERS },
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
});

export const updatePaywall = scopedRoute("paywalls:write", {
  operationId: "updatePaywall",
  method: "patch",
  path: "/paywalls/{id}",
  tags,
  summary: "Update a paywall",
  description:
    "Partial update, validated as a whole. `networks` and `headers` replace the stored lists; `serviceId: null` detaches the paywall.",
  request: {
    params: IdParamSchema,
    headers: IfMatchHeadersSchema.extend(IdempotencyHeadersSchema.shape),
    body: { ...json(PaywallUpdateSchema), required: true },
  },
  responses: {
    200: {
      description: "The updated paywall",
      headers: { ...ETAG_HEADERS, ...REPLAYED_HEADERS },
      ...json(envelope(PaywallSchema)),
    },
  },
  errors: [
    "VALIDATION_ERROR",
    "SSRF_BLOCKED",
    "INVALID_SERVICE",
    "INVALID_WALLET",
    "CONFLICT",
    "FORBIDDEN",
    "NOT_FOUND",
    "PRECONDITION_FAILED",
    ...IDEMPOTENCY_ERRORS,
  ],
});

export const deletePaywall = scopedRoute("paywalls:write", {
  operationId: "deletePaywall",
  method: "delete",
  path: "/paywalls/{id}",
  tags,
  summary: "Delete a paywall",
  request: { params: IdParamSchema, headers: IfMatchHeadersSchema.extend(IdempotencyHeadersSchema.shape) },
  responses: { 200: { description: "Deleted", headers: REPLAYED_HEADERS, ...json(envelope(DeletedSchema)) } },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND", "PRECONDITION_FAILED", ...IDEMPOTENCY_ERRORS],
});
