import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

export type Db = ReturnType<typeof createDb>;

/**
 * drizzle reports a failed statement as a `DrizzleQueryError`, but passes a failed batch through as whatever
 * the binding threw (even a bare "Network connection lost."). This marks batch failures as D1's own, keeping
 * the original error as the cause, so the error renderer can tell them from bugs.
 */
function markBatchFailures(d1: D1Database): D1Database {
  return {
    prepare: (query) => d1.prepare(query),
    batch: (statements) =>
      d1.batch(statements).catch((err: unknown) => {
        throw new Error("D1_BATCH_ERROR: the batch failed", { cause: err });
      }),
    exec: (query) => d1.exec(query),
    dump: () => d1.dump(),
    withSession: (constraint) => d1.withSession(constraint),
  } as D1Database;
}

const createDb = (d1: D1Database) => drizzle(markBatchFailures(d1), { schema });
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
