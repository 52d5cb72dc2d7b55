import type { ApiKeyRow, KeyStatus, Tenant } from "../../db/schema.ts";
import { isIpAllowed } from "../../lib/ip-allowlist.ts";
import { effectiveKeyStatus } from "./api-key.ts";

/**
 * What authenticating a key needs, as the key's Durable Object holds it (rate-limit/durable-object.ts): its
 * `api_keys` row and its tenant's, read from D1 in one query. Times are epoch milliseconds.
 */
export interface KeyRecord {
  keyHash: string;
  keyId: string;
  keyName: string;
  keyPrefix: string;
  scopes: string[];
  status: KeyStatus;
  expiresAt: number | null;
  allowedIps: string[];
  lastUsedAt: number | null;
  tenant: Tenant;
}

export const keyRecordOf = (key: ApiKeyRow, tenant: Tenant): KeyRecord => ({
  keyHash: key.keyHash,
  keyId: key.id,
  keyName: key.name,
  keyPrefix: key.keyPrefix,
  scopes: key.scopes,
  status: key.status,
  expiresAt: key.expiresAt?.getTime() ?? null,
  allowedIps: key.allowedIps,
  lastUsedAt: key.lastUsedAt?.getTime() ?? null,
  tenant,
});

/** Why a known key is refused: its state (revoked before expired before paused), then its IP allowlist. */
export type KeyRefusal = "revoked" | "expired" | "paused" | "ip";

/** The refusal of a request made with this key at `now` from `clientIp` (`CF-Connecting-IP`), or `null`. */
export function refusalOf(record: KeyRecord, now: number, clientIp: string | undefined): KeyRefusal | null {
  const expiresAt = record.expiresAt === null ? null : new Date(record.expiresAt);
  const status = effectiveKeyStatus({ status: record.status, expiresAt }, new Date(now));
  if (status !== "active") return status;
  return isIpAllowed(record.allowedIps, clientIp) ? null : "ip";
}

/**
 * How long a key's object trusts a record it read without being told of a change. Every change made through the
 * app's code (dashboard, local operator CLI, rotation, tenant changes) tells the object at once (`KeyCache.forget`);
 * this bounds what a change made any other way (the CLI's `--remote`, SQL by hand, a `forget` that failed) can take
 * to reach requests.
 */
export const RECORD_MAX_AGE_MS = 60_000;

/** `lastUsedAt` is written at most once per this interval (a conditional UPDATE, off the request's path). */
export const LAST_USED_INTERVAL_MS = 60_000;

/** Whether a request admitted at `now` should record the key's use. */
export const lastUseDue = (record: KeyRecord, now: number): boolean =>
  record.lastUsedAt === null || now - record.lastUsedAt >= LAST_USED_INTERVAL_MS;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
}

/** What a request asks of its key's object (`authorize`). */
export interface AuthorizeRequest {
  /** SHA-256 of the raw key, lowercase hex: the object's name is derived from it (keys/key-object.ts). */
  keyHash: string;
  /** `CF-Connecting-IP`, for the key's IP allowlist. */
  clientIp: string | undefined;
  limit: number;
  windowMs: number;
}

/** What `authorize` answers a request admitted by its key: who is calling, and the key's rate-limit state. */
export interface AdmittedKey {
  keyId: string;
  keyName: string;
  keyPrefix: string;
  scopes: string[];
  tenant: KeyRecord["tenant"];
}

/** `d1Statements`: D1 statements the object ran for this call (Server-Timing counts them with the request's). */
export type AuthorizeAnswer = { d1Statements: number } & (
  | { kind: "unknown" }
  | { kind: "refused"; reason: KeyRefusal }
  | { kind: "admitted"; key: AdmittedKey; decision: RateLimitDecision }
);
