import { envelope } from "../../envelope.ts";
import { ETAG_HEADERS, IfNoneMatchHeadersSchema, ITEM_NOT_MODIFIED, json, scopedRoute } from "../../openapi.ts";
import { IdParamSchema } from "../schemas.ts";
import { DiscoveryPreviewSchema } from "./schemas.ts";

export const getServiceDiscovery = scopedRoute("services:read", {
  operationId: "getServiceDiscovery",
  method: "get",
  path: "/services/{id}/discovery",
  tags: ["Services"],
  summary: "Preview a service's discovery",
  description:
    "What agents see of the service: the discovery document the payment origin serves for it (its enabled paywalls as paid " +
    "operations, its free and wallet sign-in routes), with diagnostics of what is missing or disagrees, and the listing " +
    "status facilitators returned. See docs/discovery.md.",
  request: { params: IdParamSchema, headers: IfNoneMatchHeadersSchema },
  responses: {
    200: { description: "The service's discovery preview", headers: ETAG_HEADERS, ...json(envelope(DiscoveryPreviewSchema)) },
    ...ITEM_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
});
