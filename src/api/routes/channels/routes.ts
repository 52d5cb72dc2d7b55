import { envelope, listEnvelope } from "../../envelope.ts";
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
import { ChannelIdParamSchema, ChannelListQuerySchema, ChannelSchema } from "./schemas.ts";

const tags = ["Channels"];

export const listChannels = scopedRoute("transactions:read", {
  operationId: "listChannels",
  method: "get",
  path: "/channels",
  tags,
  summary: "List session channels",
  description:
    "Newest opened first. Each channel's deposit and what its vouchers charged, claimed and settled, in integer micro-USDC. Filters: `status`, `paywallId`, `network`.",
  request: { query: ChannelListQuerySchema, headers: ListIfNoneMatchHeadersSchema },
  responses: {
    200: { description: "A page of channels", headers: LIST_ETAG_HEADERS, ...json(listEnvelope(ChannelSchema)) },
    ...LIST_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN"],
});

export const getChannel = scopedRoute("transactions:read", {
  operationId: "getChannel",
  method: "get",
  path: "/channels/{id}",
  tags,
  summary: "Get a session channel",
  description: "Another tenant's channel is answered `404`, as an id nobody holds.",
  request: { params: ChannelIdParamSchema, headers: IfNoneMatchHeadersSchema },
  responses: {
    200: { description: "The channel", headers: ETAG_HEADERS, ...json(envelope(ChannelSchema)) },
    ...ITEM_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "NOT_FOUND"],
});
