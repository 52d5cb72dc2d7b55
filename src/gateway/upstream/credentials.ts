import { type AuthMethod, isSecretField } from "../../core/secrets/auth-config.ts";
import { decryptSecret, type KeyRing, secretAad } from "../../core/secrets/secret-box.ts";
import type { PaywallRow, ServiceRow } from "../../db/schema.ts";

/** The service's authConfig in clear (names as stored, secrets decrypted), for the upstream call only. */
export async function openAuthConfig(ring: KeyRing, service: ServiceRow): Promise<Record<string, string>> {
  const method = service.authMethod as AuthMethod;
  const entries = await Promise.all(
    Object.entries(service.authConfig).map(
      async ([field, value]): Promise<[string, string]> => [
        field,
        isSecretField(method, field)
          ? await decryptSecret(ring, value, secretAad(service.tenantId, "service", service.id, `authConfig.${field}`))
          : value,
      ],
    ),
  );
  return Object.fromEntries(entries);
}

/** The paywall's extra upstream headers in clear. */
export async function openPaywallHeaders(ring: KeyRing, paywall: PaywallRow): Promise<{ key: string; value: string }[]> {
  return Promise.all(
    (paywall.headers ?? []).map(async (h) => ({
      key: h.key,
      value: await decryptSecret(ring, h.value, secretAad(paywall.tenantId, "paywall", paywall.id, `headers.${h.key}`)),
    })),
  );
}
