import type { MiddlewareHandler } from "hono";
import type { Db } from "../../db/client.ts";
import { getDb } from "../../db/client.ts";

/** Makes the request's drizzle instance available as `c.var.db`. */
export type DatabaseVariables = { db: Db };

export function database(): MiddlewareHandler<{ Bindings: Env; Variables: DatabaseVariables }> {
  return async function database(c, next) {
    c.set("db", getDb(c.env.DB));
    await next();
  };
}
