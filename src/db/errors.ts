/** D1 reports a unique violation only in the message of an error somewhere on the cause chain. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.message.includes("UNIQUE constraint failed")) return true;
  }
  return false;
}
