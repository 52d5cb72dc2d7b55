/**
 * The lines to add to a `.dev.vars` text so that it sets every one of `secrets` (name → a generator of a fresh value):
 * one `NAME=value` line per secret it does not set yet, in the order given. A secret already set is kept as it is.
 */
export function missingSecretLines(text: string, secrets: Record<string, () => string>): string[] {
  return Object.entries(secrets)
    .filter(([name]) => !new RegExp(`^\\s*${name}\\s*=`, "m").test(text))
    .map(([name, generate]) => `${name}=${generate()}`);
}
