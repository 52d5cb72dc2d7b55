import type { MiddlewareHandler } from "hono";
import type { AccessLogVariables } from "../../core/http/access-log.ts";
import { ApiError } from "../../core/http/errors.ts";
import { hashApiKey, readApiKey } from "../../core/keys/api-key.ts";
import { hasScope, type Scope } from "../../core/keys/scopes.ts";
import { countClient } from "../../core/rate-limit/limiter.ts";
import { findKeyWithTenantByHash, touchKeyLastUsed } from "../../db/api-keys.ts";
import type { ApiKeyRow, Tenant } from "../../db/schema.ts";
import { isIpAllowed } from "../../lib/ip-allowlist.ts";
import type { DatabaseVariables } from "./database.ts";

const LAST_USED_INTERVAL_MS = 60_000;

/** Who is calling: the authenticated key and its tenant. */
export interface AuthContext {
  keyId: string;
  keyName: string;
  keyPrefix: string;
  scopes: string[];
  tenant: Tenant;
}

export type AuthVariables = { auth: AuthContext };

const KEY_MESSAGES = {
  missing: "An API key is required: send `Authorization: Bearer <key>` or `X-Api-Key: <key>`",
  malformed: "The API key is not valid",
  conflict: "`Authorization` and `X-Api-Key` carry different keys",
} as const;

/** Why a stored key cannot be used right now, or `null` if it can. Revocation wins over expiry, expiry over a pause. */
export function keyStateError(key: Pick<ApiKeyRow, "status" | "expiresAt">, now: Date): ApiError | null {
  if (key.status === "revoked") return new ApiError("KEY_REVOKED", "This API key has been revoked");
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return new ApiError("KEY_EXPIRED", "This API key has expired");
  if (key.status === "paused") return new ApiError("KEY_INACTIVE", "This API key is paused");
  return null;
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
 * Authenticates the API key: format (no query for a malformed key), one indexed lookup by hash,
 * key state, then the key's IP allowlist against `CF-Connecting-IP`. Key state is read on every
 * request, so a pause or revocation holds from the next request on.
 *
 * A request refused with 401 is counted against its client address (`countClient`) before it is answered: over the
 * address's limit it gets `429` instead. A key that authenticates costs no extra call and is served even from an
 * address over its limit (addresses are shared: strangers' bad keys must not lock a tenant out).
 */
export function authenticate(): MiddlewareHandler<{
  Bindings: Env;
  Variables: DatabaseVariables & AuthVariables & AccessLogVariables;
}> {
  return async function authenticate(c, next) {
    const refuse = async (error: ApiError, keySent: boolean): Promise<never> => {
      await countClient(c);
      throw unauthorized(error, keySent);
    };
    const read = readApiKey(c.req.header("authorization"), c.req.header("x-api-key"));
    if (!read.ok) return refuse(new ApiError("INVALID_API_KEY", KEY_MESSAGES[read.reason]), read.reason !== "missing");

    const found = await findKeyWithTenantByHash(c.var.db, await hashApiKey(read.key));
    if (!found) return refuse(new ApiError("INVALID_API_KEY", KEY_MESSAGES.malformed), true);

    const { key, tenant } = found;
    const now = new Date();
    const stateError = keyStateError(key, now);
    if (stateError) return refuse(stateError, true);
    if (!isIpAllowed(key.allowedIps, c.req.header("cf-connecting-ip"))) {
      throw new ApiError("IP_NOT_ALLOWED", "This API key may not be used from this IP address");
    }

    c.set("auth", { keyId: key.id, keyName: key.name, keyPrefix: key.keyPrefix, scopes: key.scopes, tenant });
    if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= LAST_USED_INTERVAL_MS) {
      c.executionCtx.waitUntil(touchKeyLastUsed(c.var.db, key.id, now, LAST_USED_INTERVAL_MS).catch(() => {}));
    }
    await next();
  };
}

/** Refuses the request unless the key holds `scope` (a `:write` scope implies its `:read`). */
export function requireScope(scope: Scope): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function requireScope(c, next) {
    if (!hasScope(c.var.auth.scopes, scope)) {
      throw new ApiError("INSUFFICIENT_SCOPE", `This API key lacks the \`${scope}\` scope`, {
        details: { required: scope, granted: c.var.auth.scopes },
      });
    }
    await next();
  };
}
