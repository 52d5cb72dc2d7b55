import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema.ts";

export type Db = ReturnType<typeof createDb>;

const createDb = (d1: D1Database) => drizzle(d1, { schema });
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
