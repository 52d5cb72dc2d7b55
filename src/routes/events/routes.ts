import { createRoute } from "@hono/zod-openapi";
import { envelope, IdParamSchema } from "../../envelope.ts";
import { requireScope } from "../../middleware/auth.ts";
import { API_KEY_SECURITY, errorResponses, json, SCOPED_ERRORS } from "../../openapi.ts";
import { EventListQuerySchema, EventListSchema, EventSchema } from "./schemas.ts";

const tags = ["Events"];

export const listEvents = createRoute({
  method: "get",
  path: "/events",
  tags,
  summary: "List analytics events",
  description:
    "Newest first. Filters: `eventType`, `paywallId`, `serviceId`, and an inclusive `from`/`to` range on createdAt. `meta.stats` counts each eventType over the whole filtered set. Scope: `events:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("events:read")] as const,
  request: { query: EventListQuerySchema },
  responses: {
    200: { description: "A page of events with stats", ...json(EventListSchema) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN"]),
  },
});

export const getEvent = createRoute({
  method: "get",
  path: "/events/{id}",
  tags,
  summary: "Get an event",
  description: "Scope: `events:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("events:read")] as const,
  request: { params: IdParamSchema },
  responses: {
    200: { description: "The event", ...json(envelope(EventSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"]),
  },
});
