import { randomHex, sha256Hex } from "../../lib/ids.ts";

export const API_KEY_PATTERN = /^mpk_[0-9a-f]{64}$/;
export const KEY_PREFIX_LENGTH = 12;

export interface NewApiKey {
  key: string;
  keyHash: string;
  keyPrefix: string;
}

/** A fresh key: `mpk_` + 32 random bytes in hex. Only the hash and the prefix are ever stored. */
export async function generateApiKey(): Promise<NewApiKey> {
  const key = `mpk_${randomHex(32)}`;
  return { key, keyHash: await sha256Hex(key), keyPrefix: key.slice(0, KEY_PREFIX_LENGTH) };
}

export const hashApiKey = sha256Hex;

export type KeyHeaderResult = { ok: true; key: string } | { ok: false; reason: "missing" | "malformed" | "conflict" };

/**
 * Reads the key from `Authorization: Bearer` or `X-Api-Key`. Both may be sent only if they agree.
 * The format is checked here, so a malformed key never costs a database query.
 */
export function readApiKey(authorization: string | undefined, xApiKey: string | undefined): KeyHeaderResult {
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match?.[1]) return { ok: false, reason: "malformed" };
    bearer = match[1];
  }
  const header = xApiKey?.trim();
  if (bearer !== undefined && header !== undefined && bearer !== header) return { ok: false, reason: "conflict" };
  const key = bearer ?? header;
  if (key === undefined || key === "") return { ok: false, reason: "missing" };
  return API_KEY_PATTERN.test(key) ? { ok: true, key } : { ok: false, reason: "malformed" };
}

export type EffectiveKeyStatus = "active" | "paused" | "revoked" | "expired";

/** What a key does now, as its owner should see it: revoked first, then expired, then the stored pause. */
export function effectiveKeyStatus(key: { status: string; expiresAt: Date | null }, now: Date): EffectiveKeyStatus {
  if (key.status === "revoked") return "revoked";
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return "expired";
  return key.status === "paused" ? "paused" : "active";
}
