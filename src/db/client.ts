import { drizzle } from "drizzle-orm/d1";

export type Db = ReturnType<typeof createDb>;

/**
 * drizzle reports a failed statement as a `DrizzleQueryError`, but passes a failed batch through as whatever
 * the binding threw (even a bare "Network connection lost."). This marks batch failures as D1's own, keeping
 * the original error as the cause, so the error renderer can tell them from bugs.
 */
function markBatchFailures(d1: D1Database | D1DatabaseSession): D1Database {
  return {
    prepare: (query) => d1.prepare(query),
    batch: (statements) =>
      d1.batch(statements).catch((err: unknown) => {
        throw new Error("D1_BATCH_ERROR: the batch failed", { cause: err });
      }),
    ...("withSession" in d1
      ? { exec: (query: string) => d1.exec(query), dump: () => d1.dump(), withSession: (c?: string) => d1.withSession(c) }
      : {}),
  } as D1Database;
}

/**
 * No relational schema: every query is written with the query builder (but the catalog version's point read, sent as
 * written: src/db/catalog-versions.ts), and a drizzle instance is then cheap enough
 * (about a microsecond) to make one per request over its D1 session (`getSessionDb`).
 */
const createDb = (d1: D1Database | D1DatabaseSession) => drizzle(markBatchFailures(d1));
const cache = new WeakMap<D1Database, Db>();

/** One drizzle instance per D1 binding per isolate. */
export function getDb(d1: D1Database): Db {
  let db = cache.get(d1);
  if (!db) {
    db = createDb(d1);
    cache.set(d1, db);
  }
  return db;
}

/**
 * Drizzle over one D1 session (D1's Sessions API, `withSession(constraint)`): the request's queries run in one
 * sequentially consistent session, on a read replica or the primary as the constraint allows
 * (src/api/middleware/database.ts). The session opens with the first query: a request that reads nothing asks D1
 * nothing. `bookmark()`: the session's latest bookmark, `null` while it has run no query.
 */
export function getSessionDb(d1: D1Database, constraint: string): { db: Db; bookmark: () => string | null } {
  let session: D1DatabaseSession | undefined;
  const open = () => {
    session ??= d1.withSession(constraint);
    return session;
  };
  const lazy = {
    prepare: (query: string) => open().prepare(query),
    batch: (statements: D1PreparedStatement[]) => open().batch(statements),
  } as D1DatabaseSession;
  return { db: createDb(lazy), bookmark: () => session?.getBookmark() ?? null };
}
