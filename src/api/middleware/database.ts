import type { MiddlewareHandler } from "hono";
import { invalid } from "../../core/http/errors.ts";
import { type Db, getSessionDb } from "../../db/client.ts";
import { BOOKMARK_HEADER, sessionConstraint } from "../../lib/d1-bookmark.ts";

/** Makes the request's drizzle instance available as `c.var.db`. */
export type DatabaseVariables = { db: Db };

/**
 * Each request's queries run in one D1 session (D1's Sessions API, read replication): a read (`GET`, `HEAD`) on any
 * copy of the database at least as new as the `X-D1-Bookmark` it sent (else on any copy: a replica may lag), a write on
 * the primary. Every answer carries `X-D1-Bookmark`, the state the request's queries saw or made: sent back with the
 * next request, that request reads at least that state, so a client reads its own writes (docs/api.md). Locally there
 * is one copy, the primary, and every session reads it. Authentication does not read through the session: a key's
 * Durable Object reads the primary (src/core/rate-limit/durable-object.ts).
 */
export function database(): MiddlewareHandler<{ Bindings: Env; Variables: DatabaseVariables }> {
  return async function database(c, next) {
    const constraint = sessionConstraint(c.req.method, c.req.header(BOOKMARK_HEADER));
    if (constraint === undefined) throw invalid([{ path: BOOKMARK_HEADER, message: "Must be a bookmark an answer carried" }]);
    const session = getSessionDb(c.env.DB, constraint);
    c.set("db", session.db);
    await next();
    const bookmark = session.bookmark();
    if (bookmark) c.header(BOOKMARK_HEADER, bookmark);
  };
}
