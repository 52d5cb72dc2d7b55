import { HTTP_TOKEN } from "./header-rules.ts";

/**
 * What a paywall's free-form `cacheRules` means to the gateway (docs/gateway.md, "Cache rules"): a pure reading of
 * the stored object, used by the create schema (a known key of the wrong shape is refused), by the gateway (the
 * effective rules) and by the discovery lint (the keys not acted on).
 *
 * | key           | shape                                     | default                                          |
 * | ------------- | ----------------------------------------- | ------------------------------------------------ |
 * | `ttlSeconds`  | integer 0…86,400                          | absent or 0: no caching                          |
 * | `varyQuery`   | query parameter names (≤ 20): the only    | the whole query string varies the key            |
 * |               | ones forwarded                            |                                                  |
 * | `varyHeaders` | request header names (≤ 20), added to     | every buyer header forwarded upstream varies it  |
 * |               | the forwarded ones                        |                                                  |
 * | `varyBody`    | boolean (a forwarded body always varies)  | `true`: the body's SHA-256 varies the key        |
 * | `statuses`    | upstream statuses 200…399 (1 to 10)       | `[200]`                                          |
 */

export const MAX_CACHE_TTL_SECONDS = 86_400;
const MAX_NAMES = 20;
const MAX_NAME_LENGTH = 100;
const MAX_STATUSES = 10;

export interface CacheRules {
  /** Seconds an answer stays fresh; > 0 (rules with no positive ttl are `null`). */
  ttlSeconds: number;
  /** Query parameter names whose values vary the key; `null`: the whole query string. */
  varyQuery: string[] | null;
  /** Lower-case request header names whose values vary the key; `null`: every forwarded buyer header. */
  varyHeaders: string[] | null;
  /** Whether the body's SHA-256 varies the key (methods with a body). */
  varyBody: boolean;
  /** Upstream statuses that may be stored. */
  statuses: number[];
}

/** A key of `cacheRules` the gateway does not act on: unknown, or known with a value it cannot use. */
export interface NotActedOn {
  key: string;
  /** `null` for an unknown key; the problem for a known key of the wrong shape. */
  problem: string | null;
}

export interface CacheRulesReading {
  /** The effective rules, or `null` when answers are never cached (no positive `ttlSeconds`). */
  rules: CacheRules | null;
  notActedOn: NotActedOn[];
}

const isInteger = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);

const nameList = (v: unknown, valid: (name: string) => boolean, what: string): string[] | string => {
  if (!Array.isArray(v) || v.length > MAX_NAMES) return `Must be a list of at most ${MAX_NAMES} ${what}`;
  for (const name of v) {
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_NAME_LENGTH || !valid(name)) {
      return `Each entry must be a ${what.replace(/s$/, "")} of 1 to ${MAX_NAME_LENGTH} characters`;
    }
  }
  return v as string[];
};

/** Each known key: its value as the gateway uses it, or the problem with it. */
const KNOWN = {
  ttlSeconds: (v: unknown): number | string =>
    isInteger(v) && v >= 0 && v <= MAX_CACHE_TTL_SECONDS ? v : `Must be an integer from 0 to ${MAX_CACHE_TTL_SECONDS}`,
  varyQuery: (v: unknown) => nameList(v, () => true, "query parameter names"),
  varyHeaders: (v: unknown) => {
    const names = nameList(v, (name) => HTTP_TOKEN.test(name), "header names");
    return typeof names === "string" ? names : names.map((name) => name.toLowerCase());
  },
  varyBody: (v: unknown): boolean | string => (typeof v === "boolean" ? v : "Must be true or false"),
  statuses: (v: unknown): number[] | string =>
    Array.isArray(v) && v.length >= 1 && v.length <= MAX_STATUSES && v.every((s) => isInteger(s) && s >= 200 && s <= 399)
      ? (v as number[])
      : `Must be a list of 1 to ${MAX_STATUSES} statuses from 200 to 399 (an answer of 400 or more is never charged, so never cached)`,
} as const;

type Known = keyof typeof KNOWN;
/** The keys the gateway acts on. */
export const CACHE_RULE_KEYS = Object.keys(KNOWN) as Known[];
const isKnown = (key: string): key is Known => Object.hasOwn(KNOWN, key);

/** The effective cache rules of a stored `cacheRules` object, and the keys not acted on. */
export function cacheRulesOf(raw: Record<string, unknown> | null | undefined): CacheRulesReading {
  const notActedOn: NotActedOn[] = [];
  const read: { [K in Known]?: Exclude<ReturnType<(typeof KNOWN)[K]>, string> } = {};
  for (const [key, value] of Object.entries(raw ?? {})) {
    if (!isKnown(key)) {
      notActedOn.push({ key, problem: null });
      continue;
    }
    const parsed = KNOWN[key](value);
    if (typeof parsed === "string") notActedOn.push({ key, problem: parsed });
    else (read as Record<string, unknown>)[key] = parsed;
  }
  const ttlSeconds = read.ttlSeconds ?? 0;
  const rules =
    ttlSeconds > 0
      ? {
          ttlSeconds,
          varyQuery: read.varyQuery ?? null,
          varyHeaders: read.varyHeaders ?? null,
          varyBody: read.varyBody ?? true,
          statuses: read.statuses ?? [200],
        }
      : null;
  return { rules, notActedOn };
}

/**
 * What the key of a cached answer is made of: everything of the buyer's request that reaches the upstream, whatever
 * the rules or `allowedHeaders` say later. The method; the query parameters named by `varyQuery` (the only ones
 * forwarded then), else the whole query string; the values of every forwarded buyer header (`forwardedHeaders`:
 * `Accept`, `Content-Type`, `allowedHeaders`) and of `varyHeaders`' names; the body's SHA-256 when there is one
 * (`varyBody` cannot leave out a body that is forwarded). So two requests share an answer only when the upstream
 * would have been sent the same request.
 */
export interface CacheKeyInputs {
  /** The query parameter names keyed (and forwarded), sorted; `null`: the whole query string. */
  query: string[] | null;
  /** The request header names keyed, lower-case, sorted. */
  headers: string[];
}

export function cacheKeyInputs(rules: CacheRules, forwardedHeaders: readonly string[]): CacheKeyInputs {
  return {
    query: rules.varyQuery ? [...new Set(rules.varyQuery)].sort() : null,
    headers: [...new Set([...forwardedHeaders, ...(rules.varyHeaders ?? [])])].sort(),
  };
}

/** The known keys of the wrong shape, as validation issues (the create schema refuses them; unknown keys are kept). */
export const cacheRulesProblems = (raw: Record<string, unknown>): { key: string; message: string }[] =>
  cacheRulesOf(raw).notActedOn.flatMap(({ key, problem }) => (problem === null ? [] : [{ key, message: problem }]));
