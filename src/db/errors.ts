import { DrizzleQueryError } from "drizzle-orm/errors";

/** True if the error or one on its cause chain matches; D1 reports what went wrong only in messages. */
function someCause(err: unknown, test: (e: Error) => boolean): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    if (test(e)) return true;
  }
  return false;
}

export const isUniqueViolation = (err: unknown) => someCause(err, (e) => e.message.includes("UNIQUE constraint failed"));
export const isForeignKeyViolation = (err: unknown) => someCause(err, (e) => e.message.includes("FOREIGN KEY constraint failed"));

/** A failure of D1 itself (drizzle's query errors, D1's own, batch failures marked in client.ts). Their messages carry SQL and bound parameters: never shown or logged. */
export const isDatabaseFailure = (err: unknown) =>
  someCause(err, (e) => e instanceof DrizzleQueryError || /^D1_|D1 DB|SQLITE_/.test(e.message));
