// An endpoint's signing secrets at rest: sealed with the secret box, bound to their endpoint and field.
import type { WebhookEndpointRow } from "../../db/schema.ts";
import type { KeyRing } from "../secrets/secret-box.ts";
import { decryptSecret, encryptSecret, secretAad } from "../secrets/secret-box.ts";

type SecretField = "secret" | "previousSecret";

const aad = (tenantId: string, endpointId: string, field: SecretField) =>
  secretAad(tenantId, "webhook_endpoints", endpointId, field);

export const sealWebhookSecret = (ring: KeyRing, tenantId: string, endpointId: string, field: SecretField, secret: string) =>
  encryptSecret(ring, secret, aad(tenantId, endpointId, field));

/** The secrets a delivery is signed with now: the current one, and the previous one until its grace period ends. */
export async function signingSecrets(
  ring: KeyRing,
  endpoint: Pick<WebhookEndpointRow, "id" | "tenantId" | "secret" | "previousSecret" | "previousSecretExpiresAt">,
  now: Date,
): Promise<string[]> {
  const secrets = [await decryptSecret(ring, endpoint.secret, aad(endpoint.tenantId, endpoint.id, "secret"))];
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    secrets.push(await decryptSecret(ring, endpoint.previousSecret, aad(endpoint.tenantId, endpoint.id, "previousSecret")));
  }
  return secrets;
}
