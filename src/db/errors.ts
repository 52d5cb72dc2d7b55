/** D1 names a constraint violation only in the message of an error somewhere on the cause chain. */
function causeChainSays(err: unknown, text: string): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    if (e.message.includes(text)) return true;
  }
  return false;
}

export const isUniqueViolation = (err: unknown) => causeChainSays(err, "UNIQUE constraint failed");
export const isForeignKeyViolation = (err: unknown) => causeChainSays(err, "FOREIGN KEY constraint failed");
