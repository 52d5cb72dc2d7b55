import type { MiddlewareHandler } from "hono";
import { getConfig } from "../../core/config.ts";
import type { AccessLogVariables } from "../../core/http/access-log.ts";
import { ApiError } from "../../core/http/errors.ts";
import { hashApiKey, readApiKey } from "../../core/keys/api-key.ts";
import { authorizeWithKeyObject } from "../../core/keys/key-object.ts";
import type { AuthorizeAnswer, KeyRefusal, RateLimitDecision } from "../../core/keys/record.ts";
import { hasScope, type Scope } from "../../core/keys/scopes.ts";
import { clientDecision, countClient, enforce, enforceClient } from "../../core/rate-limit/limiter.ts";
import type { Tenant } from "../../db/schema.ts";
import type { DatabaseVariables } from "./database.ts";

/** Who is calling: the authenticated key and its tenant. */
export interface AuthContext {
  keyId: string;
  keyName: string;
  keyPrefix: string;
  scopes: string[];
  tenant: Tenant;
}

export type AuthVariables = { auth: AuthContext; rateLimit: RateLimitDecision };

const KEY_MESSAGES = {
  missing: "An API key is required: send `Authorization: Bearer <key>` or `X-Api-Key: <key>`",
  malformed: "The API key is not valid",
  conflict: "`Authorization` and `X-Api-Key` carry different keys",
} as const;

/** The error of a key its object refused: revocation wins over expiry, expiry over a pause; then the allowlist. */
function refusalError(reason: KeyRefusal): ApiError {
  switch (reason) {
    case "revoked":
      return new ApiError("KEY_REVOKED", "This API key has been revoked");
    case "expired":
      return new ApiError("KEY_EXPIRED", "This API key has expired");
    case "paused":
      return new ApiError("KEY_INACTIVE", "This API key is paused");
    case "ip":
      return new ApiError("IP_NOT_ALLOWED", "This API key may not be used from this IP address");
  }
}

/**
 * The RFC 6750 challenge every 401 carries: `Bearer realm="api"`, plus `error="invalid_token"` when a key was sent
 * (a request without credentials gets no error attribute).
 */
function unauthorized(error: ApiError, keySent: boolean): ApiError {
  const challenge = keySent ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"';
  return new ApiError(error.code, error.message, { headers: { "WWW-Authenticate": challenge } });
}

/**
 * Hashes of the keys this isolate has seen usable (admitted, or refused only for the client address; bounded:
 * cleared when full). A request with one of them goes straight to its key's object; any other key is first counted
 * against its client address.
 */
const admittedKeys = new Set<string>();
const MAX_ADMITTED_KEYS = 10_000;

/**
 * Authenticates the API key and counts the request against the key's limit, in one call to the key's Durable Object
 * (named after the key's SHA-256: core/keys/key-object.ts), which holds the key's record and judges the request: key
 * state, then the IP allowlist (`CF-Connecting-IP`), then the key's exact per-window quota. No D1 statement on this
 * path: the object read the key from D1 once, and every change to the key or its tenant makes it read again
 * (rate-limit/durable-object.ts), so a pause or revocation holds from the next request on.
 *
 * Unknown keys stay bounded by the client address's limit: a malformed key never reaches an object; a well-formed key
 * this isolate has not seen usable is first counted against its address (`clientDecision`), and an address over its
 * limit gets `429` before any key object is asked (so a stranger's keys can create at most the address's limit of
 * objects, and cause at most that many D1 reads, per window). A key this isolate has seen usable costs no extra call
 * and is served even from an address over its limit (addresses are shared: strangers' bad keys must not lock a tenant
 * out). A request refused with 401 is counted against its client address (once), and gets `429` instead over its limit.
 */
export function authenticate(): MiddlewareHandler<{
  Bindings: Env;
  Variables: DatabaseVariables & AuthVariables & AccessLogVariables;
}> {
  return async function authenticate(c, next) {
    let addressDecision: RateLimitDecision | undefined;
    let addressCounted = false;
    const refuse = async (error: ApiError, keySent: boolean): Promise<never> => {
      if (addressCounted) enforceClient(c, addressDecision);
      else await countClient(c);
      throw unauthorized(error, keySent);
    };
    const read = readApiKey(c.req.header("authorization"), c.req.header("x-api-key"));
    if (!read.ok) return refuse(new ApiError("INVALID_API_KEY", KEY_MESSAGES[read.reason]), read.reason !== "missing");

    const keyHash = await hashApiKey(read.key);
    if (!admittedKeys.has(keyHash)) {
      addressDecision = await clientDecision(c);
      addressCounted = true;
      if (addressDecision && !addressDecision.allowed) enforceClient(c, addressDecision);
    }
    const { max, windowMs } = getConfig(c.env).rateLimit;
    let answer: AuthorizeAnswer;
    try {
      answer = await authorizeWithKeyObject(c.env, {
        keyHash,
        clientIp: c.req.header("cf-connecting-ip"),
        limit: max,
        windowMs,
      });
    } catch {
      c.set("errorCode", "RATE_LIMITER_UNAVAILABLE");
      throw new ApiError("SERVICE_UNAVAILABLE", "Authentication is temporarily unavailable; retry shortly", {
        headers: { "Retry-After": "1" },
      });
    }
    if (answer.kind === "unknown") {
      admittedKeys.delete(keyHash);
      return refuse(new ApiError("INVALID_API_KEY", KEY_MESSAGES.malformed), true);
    }
    if (answer.kind === "refused" && answer.reason !== "ip") {
      admittedKeys.delete(keyHash);
      return refuse(refusalError(answer.reason), true);
    }
    // A usable key (admitted, or refused for the address it is used from): its next requests skip the address count.
    if (admittedKeys.size >= MAX_ADMITTED_KEYS) admittedKeys.clear();
    admittedKeys.add(keyHash);
    if (answer.kind === "refused") throw refusalError(answer.reason);
    const { decision, key } = answer;
    c.set("auth", { keyId: key.keyId, keyName: key.keyName, keyPrefix: key.keyPrefix, scopes: key.scopes, tenant: key.tenant });
    c.set("rateLimit", decision);
    // The object's clock may be ahead of ours: seconds are counted from the answer on.
    enforce(c, undefined, decision, Date.now(), `Rate limit of ${decision.limit} requests per window exceeded`);
    await next();
  };
}

/** Refuses the request unless the key holds `scope` (a `:write` scope implies its `:read`). */
export function requireScope(scope: Scope): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function requireScope(c, next) {
    if (!hasScope(c.var.auth.scopes, scope)) {
      throw new ApiError("INSUFFICIENT_SCOPE", `This API key lacks the \`${scope}\` scope`, {
        details: [
          {
            path: "",
            message: `Needs ${scope}; the key has ${c.var.auth.scopes.join(", ") || "no scope"}`,
            reason: scope,
          },
        ],
      });
    }
    await next();
  };
}
