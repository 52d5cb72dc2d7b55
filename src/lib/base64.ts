/**
 * The project's one base64 codec (RFC 4648): standard base64 with its padding, base64url (§5) without it.
 *
 * Decoding is strict, for text that comes from outside (a key ring, a stored secret, a signed URL, a webhook secret):
 * only the alphabet, padding right or absent, and the canonical spelling (no unused trailing bit set), so each byte
 * string has one text and every change to the text changes the bytes. Anything else is `undefined`, never a throw.
 */

const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL_PATTERN = /^[A-Za-z0-9_-]*$/;

/** Standard base64 of bytes of any length (they are never spread as arguments, which overflows for large arrays). */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Unpadded base64url (RFC 4648 §5): signed-URL and MPP challenge ids, sealed secrets. */
export const encodeBase64Url = (bytes: Uint8Array): string =>
  encodeBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

/** Strict standard base64, its padding optional; `undefined` when invalid or not canonical. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!BASE64_PATTERN.test(text)) return undefined;
  const unpadded = text.replace(/=+$/, "");
  if (text.length !== unpadded.length && text.length % 4 !== 0) return undefined;
  if (unpadded.length % 4 === 1) return undefined;
  const binary = atob(unpadded + "=".repeat((4 - (unpadded.length % 4)) % 4));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return encodeBase64(bytes).replace(/=+$/, "") === unpadded ? bytes : undefined;
}

/** Strict unpadded base64url; `undefined` when invalid or not canonical. */
export function decodeBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!BASE64URL_PATTERN.test(text)) return undefined;
  return decodeBase64(text.replaceAll("-", "+").replaceAll("_", "/"));
}
