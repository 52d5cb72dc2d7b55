import type { RouteHandler } from "@hono/zod-openapi";
import { discoveryPreview } from "../../../core/discovery/preview.ts";
import { findServiceWithPaywalls } from "../../../db/services.ts";
import { itemNotModified } from "../../conditional.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { assertOwned } from "../guards.ts";
import type * as routes from "./routes.ts";

export const getServiceDiscovery: RouteHandler<typeof routes.getServiceDiscovery, ApiEnv> = async (c) => {
  const found = await findServiceWithPaywalls(c.var.db, c.req.valid("param").id);
  const service = assertOwned(found?.service, c.var.auth.tenant.id, "Service");
  const preview = await discoveryPreview(c.var.db, c.env, service, found?.paywalls ?? [], c.var.auth.tenant);
  const data = {
    serviceId: service.id,
    ...preview,
    listings: preview.listings.map((l) => ({ ...l, updatedAt: l.updatedAt.toISOString() })),
  };
  if (await itemNotModified(c, data)) return c.body(null, 304);
  return c.json({ data, meta: meta(c) }, 200);
};
