import type { MiddlewareHandler } from "hono";
import { getDb } from "../db/client.ts";
import type { AppEnv } from "../types.ts";

/** Makes the request's drizzle instance available as `c.var.db`. */
export function database(): MiddlewareHandler<AppEnv> {
  return async function database(c, next) {
    c.set("db", getDb(c.env.DB));
    await next();
  };
}
