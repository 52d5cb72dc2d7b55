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
import { ServiceCreateSchema, ServiceListQuerySchema, ServiceSchema, ServiceUpdateSchema } from "./schemas.ts";

const tags = ["Services"];

export const createService = scopedRoute("services:write", {
  operationId: "createService",
  method: "post",
  path: "/services",
  tags,
  summary: "Create a service",
  description: "Registers an upstream API.",
  request: { headers: IdempotencyHeadersSchema, body: { ...json(ServiceCreateSchema), required: true } },
  responses: {
    201: { description: "The new service", headers: { ...ETAG_HEADERS, ...REPLAYED_HEADERS }, ...json(envelope(ServiceSchema)) },
  },
  errors: ["VALIDATION_ERROR", "SSRF_BLOCKED", "BETA_LIMIT_SERVICES", ...IDEMPOTENCY_ERRORS],
});

export const listServices = scopedRoute("services:read", {
  operationId: "listServices",
  method: "get",
  path: "/services",
  tags,
  summary: "List services",
  description: "Newest first, each with its paywalls.",
  request: { query: ServiceListQuerySchema, headers: ListIfNoneMatchHeadersSchema },
  responses: {
    200: { description: "A page of services", headers: LIST_ETAG_HEADERS, ...json(listEnvelope(ServiceSchema)) },
    ...LIST_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR"],
});

export const getService = scopedRoute("services:read", {
  operationId: "getService",
  method: "get",
  path: "/services/{id}",
  tags,
  summary: "Get a service",
  request: { params: IdParamSchema, headers: IfNoneMatchHeadersSchema },
  responses: {
    200: { description: "The service", headers: ETAG_HEADERS, ...json(envelope(ServiceSchema)) },
    304: { description: "Not modified: still at the `ETag` sent in `If-None-Match`", headers: ETAG_HEADERS },
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
});

export const updateService = scopedRoute("services:write", {
  operationId: "updateService",
  method: "patch",
  path: "/services/{id}",
  tags,
  summary: "Update a service",
  description: "Partial update: only the fields sent change, and the result is validated as a whole.",
  request: {
    params: IdParamSchema,
    headers: IfMatchHeadersSchema.extend(IdempotencyHeadersSchema.shape),
    body: { ...json(ServiceUpdateSchema), required: true },
  },
  responses: {
    200: {
      description: "The updated service",
      headers: { ...ETAG_HEADERS, ...REPLAYED_HEADERS },
      ...json(envelope(ServiceSchema)),
    },
  },
  errors: ["VALIDATION_ERROR", "SSRF_BLOCKED", "FORBIDDEN", "NOT_FOUND", "PRECONDITION_FAILED", ...IDEMPOTENCY_ERRORS],
});

export const deleteService = scopedRoute("services:write", {
  operationId: "deleteService",
  method: "delete",
  path: "/services/{id}",
  tags,
  summary: "Delete a service",
  description: "Deletes the service and all its paywalls, atomically.",
  request: { params: IdParamSchema, headers: IfMatchHeadersSchema.extend(IdempotencyHeadersSchema.shape) },
  responses: { 200: { description: "Deleted", headers: REPLAYED_HEADERS, ...json(envelope(DeletedSchema)) } },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND", "PRECONDITION_FAILED", ...IDEMPOTENCY_ERRORS],
});
