/**
 * Encryption of secrets at rest (security guide, "Secrets at rest").
 *
 * - Key ring (`ENCRYPTION_KEY`): `<keyId>:<base64 of 32 bytes>` entries separated by commas.
 *   The last entry encrypts; every entry decrypts.
 * - Stored value: `v1.<keyId>.<base64url iv>.<base64url ciphertext+tag>`, AES-256-GCM with a fresh
 *   12-byte IV per value and additional data binding it to its row and field (see `secretAad`).
 * - No error message ever contains key material, plaintext or ciphertext.
 *
 * Pure WebCrypto and the strict codec of lib/base64.ts: runs in workerd and in Node.
 */
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from "../../lib/base64.ts";

/** What every secret value looks like in a response. */
export const MASK = "***";

const VERSION = "v1";
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface KeyRing {
  /** The id of the key new values are encrypted with (the last entry of the secret). */
  readonly currentId: string;
  /** Every key id that can decrypt, in the order of the secret. */
  readonly keyIds: readonly string[];
}

interface KeyEntry {
  raw: Uint8Array | undefined;
  key: Promise<CryptoKey> | undefined;
}

/** Key material lives here, never on the ring object, so logging or serializing a ring reveals nothing. */
const material = new WeakMap<KeyRing, Map<string, KeyEntry>>();
/** Parsed rings by secret string: parsing and key import happen once per isolate. */
const ringCache = new Map<string, KeyRing>();
const RING_CACHE_LIMIT = 16;

function fail(message: string): never {
  throw new Error(message);
}

/** Parses the `ENCRYPTION_KEY` secret. Throws on any defect, naming only entry positions. */
export function parseKeyRing(secret: string): KeyRing {
  const cached = ringCache.get(secret);
  if (cached) return cached;

  if (typeof secret !== "string" || secret.trim() === "") fail("ENCRYPTION_KEY is empty");
  const keys = new Map<string, KeyEntry>();
  const ids: string[] = [];
  const entries = secret.split(",");
  entries.forEach((rawEntry, index) => {
    const position = `ENCRYPTION_KEY entry ${index + 1} of ${entries.length}`;
    const entry = rawEntry.trim();
    if (entry === "") fail(`${position} is empty`);
    const colon = entry.indexOf(":");
    if (colon < 0) fail(`${position} is not of the form <keyId>:<base64 key>`);
    const id = entry.slice(0, colon);
    if (!KEY_ID_PATTERN.test(id)) fail(`${position} has an invalid key id (expected 1-32 of A-Z a-z 0-9 _ -)`);
    if (keys.has(id)) fail(`${position} repeats the key id of an earlier entry`);
    const raw = decodeBase64(entry.slice(colon + 1));
    if (!raw) fail(`${position} is not valid base64`);
    if (raw.length !== KEY_BYTES) fail(`${position} must decode to ${KEY_BYTES} bytes, not ${raw.length}`);
    keys.set(id, { raw, key: undefined });
    ids.push(id);
  });

  const ring: KeyRing = Object.freeze({ currentId: ids[ids.length - 1]!, keyIds: Object.freeze(ids) });
  material.set(ring, keys);
  if (ringCache.size >= RING_CACHE_LIMIT) ringCache.delete(ringCache.keys().next().value!);
  ringCache.set(secret, ring);
  return ring;
}

/** A fresh one-key ring secret, e.g. for `.dev.vars`. */
export function generateKeyRingSecret(keyId = "k1"): string {
  if (!KEY_ID_PATTERN.test(keyId)) fail("invalid key id (expected 1-32 of A-Z a-z 0-9 _ -)");
  return `${keyId}:${encodeBase64(crypto.getRandomValues(new Uint8Array(KEY_BYTES)))}`;
}

/** Additional data binding a ciphertext to one field of one row of one tenant. */
export function secretAad(tenantId: string, resource: string, resourceId: string, field: string): string {
  const parts = [tenantId, resource, resourceId, field];
  for (const part of parts) {
    // An empty part means the row id is not known yet; a "|" would make two tuples share one AAD.
    if (typeof part !== "string" || part === "" || part.includes("|"))
      fail("secretAad parts must be non-empty and contain no '|'");
  }
  return parts.join("|");
}

export async function encryptSecret(ring: KeyRing, plaintext: string, aad: string): Promise<string> {
  if (typeof plaintext !== "string" || !plaintext.isWellFormed()) fail("secret to encrypt must be a well-formed string");
  return encryptBytes(ring, new TextEncoder().encode(plaintext), aad);
}

/** `encryptSecret` for bytes (a paid answer's body): the same stored format, the same key ring and AAD rules. */
export async function encryptBytes(ring: KeyRing, plaintext: Uint8Array, aad: string): Promise<string> {
  if (!(plaintext instanceof Uint8Array)) fail("bytes to encrypt must be a Uint8Array");
  const key = await cryptoKey(ring, ring.currentId);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encodeAad(aad), tagLength: TAG_BYTES * 8 },
    key,
    plaintext,
  );
  return `${VERSION}.${ring.currentId}.${encodeBase64Url(iv)}.${encodeBase64Url(new Uint8Array(sealed))}`;
}

export async function decryptSecret(ring: KeyRing, stored: string, aad: string): Promise<string> {
  const opened = await decryptBytes(ring, stored, aad);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(opened);
  } catch {
    fail("stored secret did not decrypt to UTF-8");
  }
}

/** `decryptSecret` for bytes: what `encryptBytes` sealed. */
export async function decryptBytes(ring: KeyRing, stored: string, aad: string): Promise<Uint8Array<ArrayBuffer>> {
  const parsed = parseStored(stored);
  if (!parsed) fail("stored secret is malformed");
  const additionalData = encodeAad(aad);
  const key = await cryptoKey(ring, parsed.keyId);
  let opened: ArrayBuffer;
  try {
    opened = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: parsed.iv, additionalData, tagLength: TAG_BYTES * 8 },
      key,
      parsed.sealed,
    );
  } catch {
    // Deliberately no cause: the message says what happened and nothing about the data.
    fail("stored secret failed authentication (tampered, wrong key or wrong row/field)");
  }
  return new Uint8Array(opened);
}

/** Whether `stored` is encrypted with the ring's current key (false for malformed values), for re-encryption on rotation. */
export function isCurrentKey(ring: KeyRing, stored: string): boolean {
  return parseStored(stored)?.keyId === ring.currentId;
}

interface StoredSecret {
  keyId: string;
  iv: Uint8Array<ArrayBuffer>;
  sealed: Uint8Array<ArrayBuffer>;
}

function parseStored(stored: string): StoredSecret | undefined {
  if (typeof stored !== "string") return undefined;
  const parts = stored.split(".");
  if (parts.length !== 4) return undefined;
  const [version, keyId, ivText, sealedText] = parts as [string, string, string, string];
  if (version !== VERSION || !KEY_ID_PATTERN.test(keyId)) return undefined;
  const iv = decodeBase64Url(ivText);
  const sealed = decodeBase64Url(sealedText);
  if (!iv || iv.length !== IV_BYTES || !sealed || sealed.length < TAG_BYTES) return undefined;
  return { keyId, iv, sealed };
}

function cryptoKey(ring: KeyRing, keyId: string): Promise<CryptoKey> {
  const keys = material.get(ring) ?? fail("not a key ring from parseKeyRing");
  const entry = keys.get(keyId) ?? fail(`stored secret uses unknown key id "${keyId}"`);
  if (!entry.key) {
    const raw = entry.raw!;
    entry.key = crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
    entry.raw = undefined;
  }
  return entry.key;
}

function encodeAad(aad: string): Uint8Array {
  // Ill-formed strings would be encoded lossily, letting two different AADs collide.
  if (typeof aad !== "string" || !aad.isWellFormed()) fail("additional data must be a well-formed string");
  return new TextEncoder().encode(aad);
}
