import type { AuthMethod } from "../../core/secrets/auth-config.ts";
import { forwardedHeaderNames } from "../../lib/header-rules.ts";

/**
 * How a paid request becomes the upstream request: pure functions, no I/O.
 *
 * Precedence, lowest first: the buyer's headers (only those the paywall allows) and query, then the paywall's
 * `headers` and `queryParams`, then the service's credentials. Headers are case-insensitive, so a later layer replaces an earlier one's
 * value of the same name.
 */

/**
 * The buyer headers that go to the upstream: the paywall's `allowedHeaders` (names, case-insensitive) and
 * `Accept` / `Content-Type` (`forwardedHeaderNames`); nothing else. Never forwarded, listed or not (`allowedHeaders`
 * refuses these names; rows stored before may hold them): the names the platform owns (framing, routing, client identity, `Authorization`, the
 * payment headers) and the buyer's own credentials (`Cookie`, `X-API-Key`, `X-API-Secret`; the bearer of
 * `bearer-customer` goes its own way, see `injectAuth`): `isNeverForwarded`, the management API's rule.
 */
export function forwardableHeaders(buyer: Headers, allowedHeaders: readonly string[]): Headers {
  const out = new Headers();
  for (const name of forwardedHeaderNames(allowedHeaders)) {
    const value = buyer.get(name);
    if (value !== null) out.set(name, value);
  }
  return out;
}

/**
 * The upstream's response headers a buyer gets: what describes the answer (its type, language, file name, range),
 * what lets the buyer cache it for itself and revalidate it, where a redirect points, and when to come back (the
 * upstream's `Retry-After` and rate-limit headers). Nothing else: no cookie, no security policy of the upstream's (the
 * payment origin sets its own, see origin-headers.ts), no CORS grant, no payment or authentication challenge (an
 * upstream's `WWW-Authenticate: Payment` or `PAYMENT-REQUIRED` would ask the buyer to pay someone else), no
 * hop-by-hop or framing header (the runtime frames the body it re-sends, decoded), nothing that names the upstream's
 * software.
 */
export const BUYER_RESPONSE_HEADERS: readonly string[] = [
  "content-type",
  "content-language",
  "content-disposition",
  "content-range",
  "accept-ranges",
  "cache-control",
  "expires",
  "etag",
  "last-modified",
  "vary",
  "location",
  "retry-after",
];

/** Rate-limit headers, standard and customary: `RateLimit`, `RateLimit-Policy`, `RateLimit-*`, `X-RateLimit-*`, `X-Rate-Limit-*`. */
const RATE_LIMIT_HEADER = /^(x-)?rate-?limit(-[a-z0-9-]+)?$/;

/** Whether the buyer gets this upstream response header (names lower-case, as `Headers` iterates them). */
export const isBuyerResponseHeader = (name: string) => BUYER_RESPONSE_HEADERS.includes(name) || RATE_LIMIT_HEADER.test(name);

/**
 * A paid answer is for its payer alone: `Cache-Control` always says `private` (or `no-store`), whatever the upstream
 * sent, and loses the directives meant for shared caches, so no proxy between buyer and platform hands one buyer's
 * paid answer to the next requester of the same payment URL.
 */
export function privateCacheControl(upstream: string | null): string {
  const kept = (upstream ?? "")
    .split(",")
    .map((directive) => directive.trim())
    .filter((directive) => directive !== "" && !/^(public|private|s-maxage|proxy-revalidate)\b/i.test(directive));
  return kept.some((directive) => /^no-store$/i.test(directive)) ? kept.join(", ") : ["private", ...kept].join(", ");
}

/** The upstream's response headers the buyer gets (see BUYER_RESPONSE_HEADERS), with a private `Cache-Control`. */
export function buyerResponseHeaders(upstream: Headers): Headers {
  const out = new Headers();
  for (const [name, value] of upstream) if (isBuyerResponseHeader(name)) out.append(name, value);
  out.set("cache-control", privateCacheControl(upstream.get("cache-control")));
  return out;
}

/** The upstream URL before the query is added: `targetUrl` (PROXY) or the service's `baseUrl` + `targetRoute` (ROUTE). */
export function targetUrl(
  paywall: { targetType: "PROXY" | "ROUTE"; targetUrl: string | null; targetRoute: string | null },
  service: { baseUrl: string },
): URL {
  if (paywall.targetType === "PROXY") return new URL(paywall.targetUrl as string);
  const base = new URL(service.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, "");
  const [path, query] = (paywall.targetRoute as string).split("?", 2) as [string, string | undefined];
  base.pathname = `${basePath}${path}`;
  if (query !== undefined) base.search = query;
  return base;
}

/**
 * Adds the buyer's query, then the paywall's `queryParams`; a later layer replaces every value of a name an earlier
 * one set: a buyer's parameter replaces the target URL's own parameter of that name (never a second value beside it),
 * and a `queryParams` entry replaces the buyer's.
 */
export function withQuery(url: URL, buyerQuery: URLSearchParams, paywallParams: { key: string; value: string }[]): URL {
  const out = new URL(url);
  for (const name of new Set(buyerQuery.keys())) out.searchParams.delete(name);
  for (const [k, v] of buyerQuery) out.searchParams.append(k, v);
  for (const { key, value } of paywallParams) out.searchParams.set(key, value);
  return out;
}

/**
 * Sets the query parameter `name` to `value` alone: every parameter spelled like it in any case goes first, so an
 * upstream that reads names case-insensitively never sees a buyer's `?API_TOKEN=…` beside the credential `api_token`.
 */
function setQueryParamAlone(url: URL, name: string, value: string): void {
  const lower = name.toLowerCase();
  for (const key of new Set(url.searchParams.keys())) if (key.toLowerCase() === lower) url.searchParams.delete(key);
  url.searchParams.set(name, value);
}

export interface UpstreamParts {
  url: URL;
  headers: Headers;
  /** The body to send; `undefined` for none. */
  body: string | ArrayBuffer | undefined;
}

export class BodyFieldError extends Error {}

/**
 * Injects the service's credentials (decrypted `authConfig`) into the request, last, so they win:
 *
 * | authMethod         | sent as                                                                    |
 * |--------------------|----------------------------------------------------------------------------|
 * | `none`             | nothing                                                                    |
 * | `bearer`           | `Authorization: Bearer <bearerToken>`                                      |
 * | `token`            | `Authorization: Token <token>`                                             |
 * | `x-api-key`        | `X-API-Key: <apiKey>`                                                      |
 * | `custom-header`    | `<headerName>: <headerValue>`                                              |
 * | `query-param`      | `?<paramName>=<paramValue>` (replacing any buyer or paywall value of that  |
 * |                    | name in any case)                                                          |
 * | `bearer-customer`  | the buyer's own `Authorization: Bearer <token>`, that credential only      |
 * | `x-api-key-secret` | `X-API-Key: <apiKey>` and `X-API-Secret: <apiSecret>`                      |
 * | `json-body-field`  | top-level field `<fieldName>: <fieldValue>` of the JSON object body (an    |
 * |                    | empty body becomes `{"<fieldName>": …}`); GET sends no body, so no field   |
 *
 * Throws `BodyFieldError` when `json-body-field` meets a body that is not a JSON object.
 */
export function injectAuth(
  method: AuthMethod,
  config: Record<string, string>,
  parts: UpstreamParts,
  buyer: { authorization: string | null; method: string },
): UpstreamParts {
  const headers = new Headers(parts.headers);
  const url = new URL(parts.url);
  let body = parts.body;
  switch (method) {
    case "none":
      break;
    case "bearer":
      headers.set("authorization", `Bearer ${config.bearerToken}`);
      break;
    case "token":
      headers.set("authorization", `Token ${config.token}`);
      break;
    case "x-api-key":
      headers.set("x-api-key", config.apiKey as string);
      break;
    case "custom-header":
      headers.set(config.headerName as string, config.headerValue as string);
      break;
    case "query-param":
      setQueryParamAlone(url, config.paramName as string, config.paramValue as string);
      break;
    case "bearer-customer": {
      // Only the Bearer credential itself: a header that also carries an MPP `Payment` credential
      // (`Bearer x, Payment …`) must not hand the buyer's signed transaction to the upstream.
      const bearer = /^bearer\s+([^\s,]+)\s*(,|$)/i.exec(buyer.authorization ?? "");
      if (bearer) headers.set("authorization", `Bearer ${bearer[1]}`);
      break;
    }
    case "x-api-key-secret":
      headers.set("x-api-key", config.apiKey as string);
      headers.set("x-api-secret", config.apiSecret as string);
      break;
    case "json-body-field": {
      if (buyer.method === "GET") break;
      const text = body === undefined ? "" : typeof body === "string" ? body : new TextDecoder().decode(body);
      let value: unknown = {};
      if (text.trim() !== "") {
        try {
          value = JSON.parse(text);
        } catch {
          throw new BodyFieldError("The request body must be a JSON object");
        }
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new BodyFieldError("The request body must be a JSON object");
      }
      body = JSON.stringify({ ...value, [config.fieldName as string]: config.fieldValue });
      headers.set("content-type", "application/json");
      break;
    }
  }
  return { url, headers, body };
}
