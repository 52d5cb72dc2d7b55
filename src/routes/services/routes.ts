import { createRoute } from "@hono/zod-openapi";
import { DeletedSchema, envelope, IdParamSchema, listEnvelope } from "../../envelope.ts";
import { requireScope } from "../../middleware/auth.ts";
import { API_KEY_SECURITY, errorResponses, json, SCOPED_ERRORS } from "../../openapi.ts";
import { ServiceCreateSchema, ServiceListQuerySchema, ServiceSchema, ServiceUpdateSchema } from "./schemas.ts";

const tags = ["Services"];

export const createService = createRoute({
  method: "post",
  path: "/services",
  tags,
  summary: "Create a service",
  description: "Registers an upstream API. Scope: `services:write`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("services:write")] as const,
  request: { body: { ...json(ServiceCreateSchema), required: true } },
  responses: {
    201: { description: "The new service", ...json(envelope(ServiceSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "SSRF_BLOCKED", "BETA_LIMIT_SERVICES"], { body: true }),
  },
});

export const listServices = createRoute({
  method: "get",
  path: "/services",
  tags,
  summary: "List services",
  description: "Newest first, each with its paywalls. Scope: `services:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("services:read")] as const,
  request: { query: ServiceListQuerySchema },
  responses: {
    200: { description: "A page of services", ...json(listEnvelope(ServiceSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR"]),
  },
});

export const getService = createRoute({
  method: "get",
  path: "/services/{id}",
  tags,
  summary: "Get a service",
  description: "Scope: `services:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("services:read")] as const,
  request: { params: IdParamSchema },
  responses: {
    200: { description: "The service", ...json(envelope(ServiceSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"]),
  },
});

export const updateService = createRoute({
  method: "patch",
  path: "/services/{id}",
  tags,
  summary: "Update a service",
  description: "Partial update: only the fields sent change, and the result is validated as a whole. Scope: `services:write`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("services:write")] as const,
  request: { params: IdParamSchema, body: { ...json(ServiceUpdateSchema), required: true } },
  responses: {
    200: { description: "The updated service", ...json(envelope(ServiceSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "SSRF_BLOCKED", "FORBIDDEN", "NOT_FOUND"], { body: true }),
  },
});

export const deleteService = createRoute({
  method: "delete",
  path: "/services/{id}",
  tags,
  summary: "Delete a service",
  description: "Deletes the service and all its paywalls, atomically. Scope: `services:write`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("services:write")] as const,
  request: { params: IdParamSchema },
  responses: {
    200: { description: "Deleted", ...json(envelope(DeletedSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"]),
  },
});
