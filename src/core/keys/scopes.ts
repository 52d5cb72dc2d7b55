export const SCOPES = [
  "services:read",
  "services:write",
  "paywalls:read",
  "paywalls:write",
  "transactions:read",
  "events:read",
  "webhooks:read",
  "webhooks:write",
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** `x:write` implies `x:read`. */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes(required)) return true;
  return required.endsWith(":read") && granted.includes(required.replace(/:read$/, ":write"));
}

/** Parses a comma-separated scope list, rejecting unknown names. */
export function parseScopes(list: string): Scope[] {
  const names = [
    ...new Set(
      list
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = names.filter((n) => !isScope(n));
  if (unknown.length > 0) throw new Error(`Unknown scope(s): ${unknown.join(", ")}. Known: ${SCOPES.join(", ")}`);
  if (names.length === 0) throw new Error("At least one scope is required");
  return names as Scope[];
}
