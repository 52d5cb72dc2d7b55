import type { StoredAuthConfig, StoredHeader } from "../../db/schema.ts";
import { AUTH_CONFIG_FIELDS, type AuthMethod, isSecretField } from "./auth-config.ts";
import { encryptSecret, type KeyRing, MASK, secretAad } from "./secret-box.ts";

/**
 * The stored form of an authConfig: names in clear, secrets encrypted and bound to their row and field.
 * A `***` value keeps the stored ciphertext of that field (callers validate it exists first).
 */
export async function sealAuthConfig(
  ring: KeyRing,
  owner: { tenantId: string; serviceId: string },
  method: AuthMethod,
  input: Record<string, string>,
  stored: StoredAuthConfig = {},
): Promise<StoredAuthConfig> {
  const fields = [...AUTH_CONFIG_FIELDS[method].names, ...AUTH_CONFIG_FIELDS[method].secrets];
  const entries = await Promise.all(
    fields.map(async (field): Promise<[string, string]> => {
      const value = input[field] as string;
      if (!isSecretField(method, field)) return [field, value];
      if (value === MASK) return [field, stored[field] as string];
      return [
        field,
        await encryptSecret(ring, value, secretAad(owner.tenantId, "service", owner.serviceId, `authConfig.${field}`)),
      ];
    }),
  );
  return Object.fromEntries(entries);
}

/** The stored form of paywall headers: values encrypted; `***` keeps the stored value of the same key. */
export async function sealHeaders(
  ring: KeyRing,
  owner: { tenantId: string; paywallId: string },
  input: { key: string; value: string }[],
  stored: StoredHeader[] = [],
): Promise<StoredHeader[]> {
  const previous = new Map(stored.map((h) => [h.key, h.value]));
  return Promise.all(
    input.map(async ({ key, value }) => ({
      key,
      value:
        value === MASK && previous.has(key)
          ? (previous.get(key) as string)
          : await encryptSecret(ring, value, secretAad(owner.tenantId, "paywall", owner.paywallId, `headers.${key}`)),
    })),
  );
}

/** Header keys sent as `***` that have no stored value to keep. */
export const headersMaskedWithoutValue = (input: { key: string; value: string }[], stored: StoredHeader[] = []) =>
  input.filter((h) => h.value === MASK && !stored.some((s) => s.key === h.key)).map((h) => h.key);
