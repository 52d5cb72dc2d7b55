import { envelope } from "../../envelope.ts";
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
import { EventSchema } from "../history-records.ts";
import { IdParamSchema } from "../schemas.ts";
import { EventListQuerySchema, EventListSchema } from "./schemas.ts";

const tags = ["Events"];

export const listEvents = scopedRoute("events:read", {
  operationId: "listEvents",
  method: "get",
  path: "/events",
  tags,
  summary: "List analytics events",
  description:
    "Newest first. Filters: `eventType`, `paywallId`, `serviceId`, and an inclusive `from`/`to` range on createdAt. `meta.stats` counts each eventType over the whole filtered set.",
  request: { query: EventListQuerySchema, headers: ListIfNoneMatchHeadersSchema },
  responses: {
    200: { description: "A page of events with stats", headers: LIST_ETAG_HEADERS, ...json(EventListSchema) },
    ...LIST_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN"],
});

export const getEvent = scopedRoute("events:read", {
  operationId: "getEvent",
  method: "get",
  path: "/events/{id}",
  tags,
  summary: "Get an event",
  request: { params: IdParamSchema, headers: IfNoneMatchHeadersSchema },
  responses: {
    200: { description: "The event", headers: ETAG_HEADERS, ...json(envelope(EventSchema)) },
    ...ITEM_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
});
