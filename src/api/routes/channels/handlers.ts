import type { RouteHandler } from "@hono/zod-openapi";
import { notFound } from "../../../core/http/errors.ts";
import { findChannel, findChannelsPage } from "../../../db/channels.ts";
import { itemNotModified, listAnswer } from "../../conditional.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { assertFilterRefsOwned } from "../guards.ts";
import type * as routes from "./routes.ts";
import { toChannel } from "./schemas.ts";

export const listChannels: RouteHandler<typeof routes.listChannels, ApiEnv> = async (c) => {
  const { limit, offset, ...filter } = c.req.valid("query");
  const tenantId = c.var.auth.tenant.id;
  await assertFilterRefsOwned(c.var.db, tenantId, filter);
  const page = await findChannelsPage(c.var.db, tenantId, { limit, offset }, filter);
  return listAnswer(c, { data: page.rows.map(toChannel), total: page.total, limit, offset });
};

export const getChannel: RouteHandler<typeof routes.getChannel, ApiEnv> = async (c) => {
  // Another tenant's channel is answered as one nobody holds: a channel id is public on chain, and whether it is paid
  // through this platform, to whom, is not.
  const row = await findChannel(c.var.db, c.var.auth.tenant.id, c.req.valid("param").id);
  if (!row) throw notFound("Channel");
  const data = toChannel(row);
  if (await itemNotModified(c, data)) return c.body(null, 304);
  return c.json({ data, meta: meta(c) }, 200);
};
