/**
 * The Standard Webhooks signature scheme (the one Svix, OpenAI and others use), with WebCrypto only:
 *
 * - a secret is `whsec_` + the base64 of its key bytes;
 * - a delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`: space-separated
 *   `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret that is valid at the time (a receiver
 *   accepts the delivery if any one of them verifies, so a secret can be rolled without a gap).
 *
 * Pure: runs in workerd and in Node.
 */

import { decodeBase64, encodeBase64 } from "./base64.ts";

export const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;

/** The key bytes of a secret's base64, which carries its padding (as `newWebhookSecret` writes it). */
const secretKey = (text: string) => (text.length % 4 === 0 ? decodeBase64(text) : undefined);

/** A fresh signing secret: `whsec_` and 32 random bytes in base64. */
export const newWebhookSecret = (): string => SECRET_PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));

/** Whether `secret` is a well-formed signing secret (`whsec_` and base64 of at least 24 bytes). */
export function isWebhookSecret(secret: string): boolean {
  if (!secret.startsWith(SECRET_PREFIX)) return false;
  const bytes = secretKey(secret.slice(SECRET_PREFIX.length));
  return bytes !== undefined && bytes.length >= 24 && bytes.length <= 64;
}

/** `v1,<base64 signature>` of one delivery under one secret. */
export async function webhookSignature(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const key = isWebhookSecret(secret) ? secretKey(secret.slice(SECRET_PREFIX.length)) : undefined;
  if (!key) throw new Error("Not a webhook signing secret");
  const hmac = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${encodeBase64(new Uint8Array(mac))}`;
}

/** The three Standard Webhooks headers of a delivery, signed with every secret given (current first). */
export async function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Promise<Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>> {
  const signatures = await Promise.all(secrets.map((secret) => webhookSignature(secret, id, timestamp, body)));
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signatures.join(" ") };
}

/** Media types whose bytes are text worth showing: text/*, JSON, XML, forms. */
const TEXTUAL = /^(text\/|application\/([\w.+-]*\+)?(json|xml)|application\/x-www-form-urlencoded)/i;

/**
 * The first bytes of a receiver's answer as text, for the delivery log: at most `max` bytes of a textual body,
 * decoded as UTF-8 (a character cut at the end is dropped), control characters other than tab and newline replaced;
 * `null` for a body that is not text or is empty.
 */
export function responseExcerpt(bytes: Uint8Array, contentType: string | null, max = 256): string | null {
  if (bytes.length === 0 || !contentType || !TEXTUAL.test(contentType.trim())) return null;
  const text = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false }).decode(bytes.subarray(0, max), { stream: true });
  return text.replace(/(?![\t\n])\p{Cc}/gu, "\ufffd");
}
