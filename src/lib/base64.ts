/** Standard base64 of bytes of any length (they are never spread as arguments, which overflows for large arrays). */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Unpadded base64url (RFC 4648 §5): signed-URL and MPP challenge ids, sealed secrets. */
export const encodeBase64Url = (bytes: Uint8Array): string =>
  encodeBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
