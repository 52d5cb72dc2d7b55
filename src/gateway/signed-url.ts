/**
 * Signed URL tokens: `<id>.<expiresAtMs>.<base64url HMAC-SHA256(id.expiresAtMs)>`.
 *
 * The HMAC key is derived (HKDF-SHA256, info `signed-url v1`) from the Worker's `ENCRYPTION_KEY` secret, so no
 * second secret has to be provisioned; rotating that secret invalidates outstanding URLs, which live minutes.
 * The signature makes a token unforgeable and its expiry untamperable; the D1 row makes it single-use.
 */

const keys = new Map<string, Promise<CryptoKey>>();

function signingKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveKey"])
      .then((base) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode("signed-url v1") },
          base,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign", "verify"],
        ),
      );
    keys.set(secret, key);
  }
  return key;
}

const toBase64Url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return undefined;
  const binary = atob(`${text.replaceAll("-", "+").replaceAll("_", "/")}=`);
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

export async function signToken(secret: string, id: string, expiresAt: Date): Promise<string> {
  const message = `${id}.${expiresAt.getTime()}`;
  const mac = await crypto.subtle.sign("HMAC", await signingKey(secret), new TextEncoder().encode(message));
  return `${message}.${toBase64Url(mac)}`;
}

/** The token's id and expiry if its signature holds (expiry is checked by the caller, against the clock). */
export async function readToken(secret: string, token: string): Promise<{ id: string; expiresAt: Date } | undefined> {
  const match = /^([A-Za-z0-9_]{1,64})\.([0-9]{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const [, id, expires, sig] = match as unknown as [string, string, string, string];
  const mac = fromBase64Url(sig);
  if (!mac) return undefined;
  const valid = await crypto.subtle.verify("HMAC", await signingKey(secret), mac, new TextEncoder().encode(`${id}.${expires}`));
  return valid ? { id, expiresAt: new Date(Number(expires)) } : undefined;
}
