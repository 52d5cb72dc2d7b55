import { createRoute } from "@hono/zod-openapi";
import { envelope, IdParamSchema, listEnvelope } from "../../envelope.ts";
import { requireScope } from "../../middleware/auth.ts";
import { API_KEY_SECURITY, errorResponses, json, SCOPED_ERRORS } from "../../openapi.ts";
import { TransactionListQuerySchema, TransactionSchema } from "./schemas.ts";

const tags = ["Transactions"];

export const listTransactions = createRoute({
  method: "get",
  path: "/transactions",
  tags,
  summary: "List payment transactions",
  description:
    "Newest first. Filters: `status`, `paywallId`, `serviceId`, `network`, `protocol`, and an inclusive `from`/`to` range on createdAt. Scope: `transactions:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("transactions:read")] as const,
  request: { query: TransactionListQuerySchema },
  responses: {
    200: { description: "A page of transactions", ...json(listEnvelope(TransactionSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN"]),
  },
});

export const getTransaction = createRoute({
  method: "get",
  path: "/transactions/{id}",
  tags,
  summary: "Get a transaction",
  description: "Scope: `transactions:read`.",
  security: API_KEY_SECURITY,
  middleware: [requireScope("transactions:read")] as const,
  request: { params: IdParamSchema },
  responses: {
    200: { description: "The transaction", ...json(envelope(TransactionSchema)) },
    ...errorResponses([...SCOPED_ERRORS, "VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"]),
  },
});
