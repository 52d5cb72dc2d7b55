/**
 * Each API key's Durable Object (the `RateLimiter` class, rate-limit/durable-object.ts) is named after the SHA-256 of
 * the raw key, so a request reaches it from the key it carries, without D1, and every change path reaches it from the
 * key's row (`key_hash`). The object holds the key's record for authentication; `KeyCache` is how a change tells it.
 */
import type { Db } from "../../db/client.ts";
import type { AuthorizeAnswer, AuthorizeRequest } from "./record.ts";

/** The object's name: `key:` and the key's SHA-256 (lowercase hex). Client addresses are `ip:…`: never a `key:` name. */
export const keyObjectName = (keyHash: string): string => `key:${keyHash}`;

/** The stub of the key's object. */
export const keyObject = (env: Pick<Env, "RATE_LIMITER">, keyHash: string) =>
  env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyObjectName(keyHash)));

/**
 * Tells keys' objects that their records changed in D1: each drops its copy and reads D1 again on its next request.
 * Called after the D1 write has committed, and before the change is reported done: from then on no request is
 * judged on the state from before it.
 */
export interface KeyCache {
  forget(keyHashes: readonly string[]): Promise<void>;
}

/** What the key-management functions work on: the database, and the cache of the objects in front of it. */
export interface KeyStore {
  db: Db;
  cache: KeyCache;
}

/** A retryable error of a Durable Object call (its connection broke, the object moved) is retried once. */
async function withRetry<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err as { retryable?: boolean }).retryable || (err as { overloaded?: boolean }).overloaded) throw err;
    return await call();
  }
}

/** Asks the key's object to authenticate a request and count it (one call; a retryable failure is retried once). */
export const authorizeWithKeyObject = (env: Pick<Env, "RATE_LIMITER">, request: AuthorizeRequest): Promise<AuthorizeAnswer> =>
  withRetry(async (): Promise<AuthorizeAnswer> => (await keyObject(env, request.keyHash).authorize(request)) as AuthorizeAnswer);

/** The Worker's cache: the objects through its own `RATE_LIMITER` binding. */
export const workerKeyCache = (env: Pick<Env, "RATE_LIMITER">): KeyCache => ({
  async forget(keyHashes) {
    await Promise.all(keyHashes.map((hash) => withRetry(() => keyObject(env, hash).forget())));
  },
});

/** The store of a request in the Worker (the dashboard). */
export const workerKeyStore = (db: Db, env: Pick<Env, "RATE_LIMITER">): KeyStore => ({ db, cache: workerKeyCache(env) });
