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
import { TransactionSchema } from "../history-records.ts";
import { IdParamSchema } from "../schemas.ts";
import { TransactionListQuerySchema } from "./schemas.ts";

const tags = ["Transactions"];

export const listTransactions = scopedRoute("transactions:read", {
  operationId: "listTransactions",
  method: "get",
  path: "/transactions",
  tags,
  summary: "List payment transactions",
  description:
    "Newest first. Filters: `status`, `paywallId`, `serviceId`, `network`, `protocol`, and an inclusive `from`/`to` range on createdAt.",
  request: { query: TransactionListQuerySchema, headers: ListIfNoneMatchHeadersSchema },
  responses: {
    200: { description: "A page of transactions", headers: LIST_ETAG_HEADERS, ...json(listEnvelope(TransactionSchema)) },
    ...LIST_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN"],
});

export const getTransaction = scopedRoute("transactions:read", {
  operationId: "getTransaction",
  method: "get",
  path: "/transactions/{id}",
  tags,
  summary: "Get a transaction",
  request: { params: IdParamSchema, headers: IfNoneMatchHeadersSchema },
  responses: {
    200: { description: "The transaction", headers: ETAG_HEADERS, ...json(envelope(TransactionSchema)) },
    ...ITEM_NOT_MODIFIED,
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
});
