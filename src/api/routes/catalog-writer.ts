import type { Context } from "hono";
import type { CatalogWriter } from "../../core/catalog/services.ts";
import { getConfig, keyRing } from "../../core/config.ts";
import type { ApiEnv } from "../env.ts";

/** Who writes services and paywalls for this request: the API key's tenant (rules in src/core/catalog/). */
export const writerOf = (c: Context<ApiEnv>): CatalogWriter => ({
  db: c.var.db,
  ring: keyRing(c.env),
  config: getConfig(c.env),
  tenant: c.var.auth.tenant,
  now: new Date(),
  actor: "api",
  ip: null,
});
