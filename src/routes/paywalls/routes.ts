import { createRoute } from "@hono/zod-openapi";
import { DeletedSchema, envelope, IdParamSchema, listEnvelope } from "../../envelope.ts";
import { requireScope } from "../../middleware/auth.ts";
import { API_KEY_SECURITY, errorResponses, json, SCOPED_ERRORS } from "../../openapi.ts";
import { PaywallCreateSchema, PaywallListQuerySchema, PaywallSchema, PaywallUpdateSchema } from "./schemas.ts";

const tags = ["Paywalls"];

export const createPaywall = createRoute({
  method: "post",
  path: "/paywalls",
  tags,
  summary: "Create a paywall",
  description:
    "Prices a route. `merchantWallet` is set to the tenant's primary wallet; networks must match the service's mode. A slug already used in the service is `409 CONFLICT`. Scope: `paywalls:write`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("paywalls:write")] as const,
  request: { body: { ...json(PaywallCreateSchema), required: true } },
  responses: {
    201: { description: "The new paywall", ...json(envelope(PaywallSchema)) },
    ...errorResponses(
      [...SCOPED_ERRORS, "VALIDATION_ERROR", "SSRF_BLOCKED", "INVALID_SERVICE", "CONFLICT", "BETA_LIMIT_PAYWALLS"],
      {
        body: true,
      },
    ),
  },
});

export const listPaywalls = createRoute({
  method: "get",
  path: "/paywalls",
  tags,
  summary: "List paywalls",
  description: "Newest first; filter by `serviceId` and `enabled`. Scope: `paywalls:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("paywalls:read")] as const,
  request: { query: PaywallListQuerySchema },
  responses: {
    200: { description: "A page of paywalls", ...json(listEnvelope(PaywallSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"]),
  },
});

export const getPaywall = createRoute({
  method: "get",
  path: "/paywalls/{id}",
  tags,
  summary: "Get a paywall",
  description: "Scope: `paywalls:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("paywalls:read")] as const,
  request: { params: IdParamSchema },
  responses: {
    200: { description: "The paywall", ...json(envelope(PaywallSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"]),
  },
});

export const updatePaywall = createRoute({
  method: "patch",
  path: "/paywalls/{id}",
  tags,
  summary: "Update a paywall",
  description:
    "Partial update, validated as a whole. `networks` and `headers` replace the stored lists; `serviceId: null` detaches the paywall. Scope: `paywalls:write`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("paywalls:write")] as const,
  request: { params: IdParamSchema, body: { ...json(PaywallUpdateSchema), required: true } },
  responses: {
    200: { description: "The updated paywall", ...json(envelope(PaywallSchema)) },
    ...errorResponses(
      [
        ...SCOPED_ERRORS,
        "VALIDATION_ERROR",
        "SSRF_BLOCKED",
        "INVALID_SERVICE",
        "INVALID_WALLET",
        "CONFLICT",
        "FORBIDDEN",
        "NOT_FOUND",
      ],
      { body: true },
    ),
  },
});

export const deletePaywall = createRoute({
  method: "delete",
  path: "/paywalls/{id}",
  tags,
  summary: "Delete a paywall",
  description: "Scope: `paywalls:write`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("paywalls:write")] as const,
  request: { params: IdParamSchema },
  responses: {
    200: { description: "Deleted", ...json(envelope(DeletedSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"]),
  },
});
