import type { PaymentTarget } from "../db/gateway.ts";
import { type CacheRules, cacheKeyInputs, cacheRulesOf } from "../lib/cache-rules.ts";
import { forwardedHeaderNames } from "../lib/header-rules.ts";
import { sha256Hex } from "../lib/ids.ts";
import { type AnswerParts, bytesSha256, decodeAnswer, encodeAnswer } from "./paid-answer.ts";

// The edge cache of paid answers (docs/gateway.md, "Cache rules"): an upstream answer that is the same for every
// buyer, kept per data centre in the Workers Cache API for the paywall's `cacheRules.ttlSeconds`, so the next buyer
// who pays for the same request is answered without calling the upstream. Payment is never skipped: a hit is served
// only from `pipeline/fulfil.ts` after the buyer's own payment settled. Not the exactly-once answers (`paid-answer.ts`), which
// are one payment's own and live in D1.

/** The largest answer body stored; a larger one reaches the buyer and is not cached. */
export const MAX_CACHED_ANSWER_BYTES = 1024 * 1024;

/** A named cache, apart from `caches.default` (never read by the CDN's own fetches, nor purged with the zone's). */
const CACHE_NAME = "paid-answers";
/** When the stored copy was made (ms since the epoch): the gateway's own freshness check and the buyer's `Age`. */
const STORED_AT = "x-paid-answer-stored-at";

/** The headers of an answer that says where it came from. */
export const CACHE_STATUS_HEADER = "X-Cache";

/**
 * The rules a paywall's answers are cached under, or `null` when they never are: no positive `ttlSeconds`; a
 * `SIGNED_URL` paywall (the answer is a one-time URL); a `bearer-customer` service (the buyer's own credential reaches
 * the upstream, so its answer is the buyer's).
 */
export function cacheRulesFor(target: PaymentTarget): CacheRules | null {
  if (target.paywall.fulfillmentMode !== "PROXY") return null;
  if (target.service.authMethod === "bearer-customer") return null;
  return cacheRulesOf(target.paywall.cacheRules).rules;
}

/**
 * The buyer's query parameters that go upstream: under rules with `varyQuery`, only the parameters it names (the
 * key holds exactly those), else all of them.
 */
export function forwardedQuery(query: URLSearchParams, rules: CacheRules | null): URLSearchParams {
  if (!rules?.varyQuery) return query;
  const named = new Set(rules.varyQuery);
  return new URLSearchParams([...query].filter(([name]) => named.has(name)));
}

/**
 * The parts of a buyer request that vary the key, under `rules` and the paywall's current `allowedHeaders`: exactly
 * what reaches the upstream of it (`cacheKeyInputs`): the method, the forwarded query, every forwarded buyer header
 * and `varyHeaders`' values, the body's SHA-256. Pure.
 */
export function varyingParts(
  rules: CacheRules,
  request: { method: string; url: string; headers: Headers },
  allowedHeaders: readonly string[],
  bodyHash: string | null,
): string {
  const { search, searchParams } = new URL(request.url);
  const inputs = cacheKeyInputs(rules, forwardedHeaderNames(allowedHeaders));
  const query = inputs.query ? inputs.query.map((name) => [name, searchParams.getAll(name)]) : search;
  const headers = inputs.headers.map((name) => [name, request.headers.get(name)]);
  return JSON.stringify([request.method, query, headers, bodyHash]);
}

/**
 * The cache key of a buyer request: a synthetic URL naming the paywall, its version and its service's version (every
 * write of either bumps them: price, target, networks, headers, credentials), then the varying parts' SHA-256. An
 * answer made under another configuration is never found.
 */
export async function answerCacheKey(
  target: PaymentTarget,
  rules: CacheRules,
  request: { method: string; url: string; headers: Headers },
  body: ArrayBuffer | undefined,
): Promise<string> {
  const bodyHash = body && body.byteLength > 0 ? await bytesSha256(body) : null;
  const parts = varyingParts(rules, request, target.paywall.allowedHeaders, bodyHash);
  const { paywall, service } = target;
  return `https://paid-answers.invalid/${paywall.id}/${paywall.version}/${service.version}/${await sha256Hex(parts)}`;
}

/**
 * Whether an upstream answer may be served to other buyers: a status of `rules.statuses`, no `Set-Cookie`, no
 * `Cache-Control` `private`, `no-store` or `no-cache`, no `Vary: *`, a body of at most `MAX_CACHED_ANSWER_BYTES`.
 */
export function isStorable(rules: CacheRules, answer: { status: number; headers: Headers; body: ArrayBuffer }): boolean {
  if (!rules.statuses.includes(answer.status)) return false;
  if (answer.headers.has("set-cookie")) return false;
  if (/(^|[\s,])(private|no-store|no-cache)\b/i.test(answer.headers.get("cache-control") ?? "")) return false;
  if ((answer.headers.get("vary") ?? "").split(",").some((name) => name.trim() === "*")) return false;
  return answer.body.byteLength <= MAX_CACHED_ANSWER_BYTES;
}

/** A fresh stored answer and its age in seconds, or `null` (none, stale, or the cache failed: then it is a miss). */
export async function cachedAnswer(
  key: string,
  rules: CacheRules,
  now = Date.now(),
): Promise<{ answer: AnswerParts; age: number } | null> {
  try {
    const stored = await (await caches.open(CACHE_NAME)).match(key);
    if (!stored) return null;
    const storedAt = Number(stored.headers.get(STORED_AT));
    if (!Number.isFinite(storedAt) || now < storedAt || now - storedAt >= rules.ttlSeconds * 1000) {
      await stored.body?.cancel();
      return null;
    }
    const answer = decodeAnswer(new Uint8Array(await stored.arrayBuffer()));
    return { answer, age: Math.floor((now - storedAt) / 1000) };
  } catch (err) {
    console.warn(JSON.stringify({ gateway: "answer-cache-read-failed", error: String(err) }));
    return null;
  }
}

/** Stores an answer (status, the buyer's headers, body) for `rules.ttlSeconds`; a failure is logged, never thrown. */
export async function storeAnswer(key: string, rules: CacheRules, answer: AnswerParts, now = Date.now()): Promise<void> {
  try {
    const copy = new Response(encodeAnswer(answer), {
      headers: { "Cache-Control": `max-age=${rules.ttlSeconds}`, [STORED_AT]: String(now) },
    });
    await (await caches.open(CACHE_NAME)).put(key, copy);
  } catch (err) {
    console.warn(JSON.stringify({ gateway: "answer-cache-write-failed", error: String(err) }));
  }
}
