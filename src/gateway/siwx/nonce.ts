import { hmacKey } from "../../lib/hmac.ts";

/**
 * Sign-In-With-X nonces the gateway issued: `<32 hex random><32 hex tag>`, the tag an HMAC-SHA256 (key derived from
 * `ENCRYPTION_KEY`, HKDF info `siwx-nonce v1`) over the random part, the challenge's URI (origin and path) and its
 * `issuedAt`, cut to 128 bits. So a nonce is accepted only for the route and the moment it was issued for: a client
 * cannot mint its own challenge, nor move one to another route or make it look younger. Single use is the database's
 * part (`claimSiwxNonce`).
 */

const hex = (bytes: ArrayBuffer | Uint8Array) =>
  Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

async function tagOf(secret: string, random: string, uri: string, issuedAt: string): Promise<string> {
  const mac = await crypto.subtle.sign(
    "HMAC",
    await hmacKey(secret, "siwx-nonce v1"),
    new TextEncoder().encode(`${random}|${uri}|${issuedAt}`),
  );
  return hex(mac).slice(0, 32);
}

export async function issueNonce(secret: string, uri: string, issuedAt: string): Promise<string> {
  const random = hex(crypto.getRandomValues(new Uint8Array(16)));
  return `${random}${await tagOf(secret, random, uri, issuedAt)}`;
}

/** Whether the gateway issued `nonce` for this URI at this `issuedAt` (constant-time comparison of the tag). */
export async function isIssuedNonce(secret: string, nonce: string, uri: string, issuedAt: string): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/.test(nonce)) return false;
  const expected = new TextEncoder().encode(await tagOf(secret, nonce.slice(0, 32), uri, issuedAt));
  const given = new TextEncoder().encode(nonce.slice(32));
  return crypto.subtle.timingSafeEqual(expected, given);
}
