import type { RouteHandler } from "@hono/zod-openapi";
import { findTransaction, findTransactionsPage } from "../../../db/transactions.ts";
import { itemNotModified, listAnswer } from "../../conditional.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { assertFilterRefsOwned, assertOwned } from "../guards.ts";
import { toTransaction } from "../history-records.ts";
import type * as routes from "./routes.ts";

export const listTransactions: RouteHandler<typeof routes.listTransactions, ApiEnv> = async (c) => {
  const { limit, offset, ...filter } = c.req.valid("query");
  const tenantId = c.var.auth.tenant.id;
  await assertFilterRefsOwned(c.var.db, tenantId, filter);
  const page = await findTransactionsPage(c.var.db, tenantId, { limit, offset }, filter);
  return listAnswer(c, { data: page.rows.map(toTransaction), total: page.total, limit, offset });
};

export const getTransaction: RouteHandler<typeof routes.getTransaction, ApiEnv> = async (c) => {
  const row = assertOwned(await findTransaction(c.var.db, c.req.valid("param").id), c.var.auth.tenant.id, "Transaction");
  const data = toTransaction(row);
  if (await itemNotModified(c, data)) return c.body(null, 304);
  return c.json({ data, meta: meta(c) }, 200);
};
