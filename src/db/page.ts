import { type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";

/** Which slice of a list: what the data-access functions take. */
export interface Page {
  limit: number;
  offset: number;
}

/**
 * An audit statement to add to a write's batch, written only if `condition` holds when it runs (see
 * `accountEventIf` in account-events.ts): the write and its record commit together or not at all.
 */
export type Audit = (condition: SQL) => BatchItem<"sqlite">;

/** `changes() > 0`: the statement just before, in the same batch, changed a row. */
export const changedJustNow = sql`changes() > 0`;
