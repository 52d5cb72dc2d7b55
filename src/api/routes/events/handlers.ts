import type { RouteHandler } from "@hono/zod-openapi";
import { findEvent, findEventsPage } from "../../../db/events.ts";
import { itemNotModified, listAnswer } from "../../conditional.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { assertFilterRefsOwned, assertOwned } from "../guards.ts";
import { toEvent } from "../history-records.ts";
import type * as routes from "./routes.ts";

export const listEvents: RouteHandler<typeof routes.listEvents, ApiEnv> = async (c) => {
  const { limit, offset, ...filter } = c.req.valid("query");
  const tenantId = c.var.auth.tenant.id;
  await assertFilterRefsOwned(c.var.db, tenantId, filter);
  const page = await findEventsPage(c.var.db, tenantId, { limit, offset }, filter);
  return listAnswer(c, { data: page.rows.map(toEvent), total: page.total, limit, offset }, { stats: page.stats });
};

export const getEvent: RouteHandler<typeof routes.getEvent, ApiEnv> = async (c) => {
  const row = assertOwned(await findEvent(c.var.db, c.req.valid("param").id), c.var.auth.tenant.id, "Event");
  const data = toEvent(row);
  if (await itemNotModified(c, data)) return c.body(null, 304);
  return c.json({ data, meta: meta(c) }, 200);
};
