const keys = new Map<string, Promise<CryptoKey>>();

/**
 * An HMAC-SHA256 key derived from a secret for one purpose (HKDF-SHA256 with `info` naming the purpose, empty salt):
 * one root secret serves several MACs without one being usable for another. Derived once per isolate and purpose.
 */
export function hmacKey(secret: string, info: string): Promise<CryptoKey> {
  const id = `${info}\u0000${secret}`;
  let key = keys.get(id);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveKey"])
      .then((base) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode(info) },
          base,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign", "verify"],
        ),
      );
    key.catch(() => keys.delete(id));
    keys.set(id, key);
  }
  return key;
}
