import type { AuthMethod } from "../../core/secrets/auth-config.ts";

/**
 * How a paid request becomes the upstream request: pure functions, no I/O.
 *
 * Precedence, lowest first: the buyer's headers (only those the paywall allows) and query, then the paywall's
 * `headers` and `queryParams`, then the service's credentials. Headers are case-insensitive, so a later layer replaces an earlier one's
 * value of the same name.
 */

/**
 * Buyer headers never forwarded, even when a paywall lists them in `allowedHeaders`: the buyer's own credentials
 * (the bearer of `bearer-customer` goes its own way, see `injectAuth`), the payment itself, cookies for the payment
 * domain, hop-by-hop and proxy headers, and the platform's own — among them a wallet sign-in (`SIGN-IN-WITH-X`) and
 * the `X-SIWX-*` headers the gateway sets for a verified wallet (docs/discovery.md), which a buyer must never forge.
 */
const STRIPPED_REQUEST_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "x-api-key",
  "x-api-secret",
  "cookie",
  "payment-signature",
  "x-payment",
  "payment-required",
  "payment-response",
  "payment-receipt",
  "sign-in-with-x",
  "host",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "expect",
  "forwarded",
]);
const STRIPPED_REQUEST_PREFIXES = ["cf-", "x-forwarded-", "proxy-", "x-siwx-"];

/**
 * Buyer headers every paywall forwards: `Content-Type` describes the body that is forwarded, `Accept` the answer
 * wanted; neither says who the buyer is.
 */
export const ALWAYS_FORWARDED_HEADERS: readonly string[] = ["accept", "content-type"];

const isStripped = (name: string) =>
  STRIPPED_REQUEST_HEADERS.has(name) || STRIPPED_REQUEST_PREFIXES.some((p) => name.startsWith(p));

/**
 * The buyer headers that go to the upstream: the paywall's `allowedHeaders` (names, case-insensitive) and
 * `Accept` / `Content-Type`; nothing else. A stripped header is never forwarded, listed or not.
 */
export function forwardableHeaders(buyer: Headers, allowedHeaders: readonly string[]): Headers {
  const allowed = new Set([...ALWAYS_FORWARDED_HEADERS, ...allowedHeaders.map((h) => h.toLowerCase())]);
  const out = new Headers();
  for (const [name, value] of buyer) {
    if (allowed.has(name) && !isStripped(name)) out.set(name, value);
  }
  return out;
}

/** Upstream response headers the buyer never sees (hop-by-hop; the body is re-framed by the runtime). */
const STRIPPED_RESPONSE_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "set-cookie"]);

export function buyerResponseHeaders(upstream: Headers): Headers {
  const out = new Headers();
  for (const [name, value] of upstream) if (!STRIPPED_RESPONSE_HEADERS.has(name)) out.append(name, value);
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

/** Adds the buyer's query, then the paywall's `queryParams` (replacing the buyer's value of the same name). */
export function withQuery(url: URL, buyerQuery: URLSearchParams, paywallParams: { key: string; value: string }[]): URL {
  const out = new URL(url);
  for (const [k, v] of buyerQuery) out.searchParams.append(k, v);
  for (const { key, value } of paywallParams) out.searchParams.set(key, value);
  return out;
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
 * | `query-param`      | `?<paramName>=<paramValue>` (replacing any buyer or paywall value)         |
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
      url.searchParams.set(config.paramName as string, config.paramValue as string);
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
