/**
 * Names and values that become parts of the upstream request: header names (`authConfig.headerName`, paywall
 * `headers[].key`, `allowedHeaders`), header values, and query or JSON field names (`paramName`, `fieldName`,
 * paywall `queryParams[].key`).
 *
 * RESERVED_HEADERS is the one list of header names a tenant may not set on the upstream request, for the
 * management API and the payment gateway alike: headers that frame or route the message (a tenant value would
 * split, smuggle or redirect it), headers the platform writes itself, and the payment headers of x402 and MPP.
 */

/** RFC 9110 `token`: the characters of a field name. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Refused as tenant-set header names, compared case-insensitively:
 * - framing and connection: Host, Content-Length, Transfer-Encoding, Connection, Upgrade, TE, Trailer, Keep-Alive,
 *   Expect;
 * - routing and client identity: Forwarded, Via, Max-Forwards, X-Real-IP, True-Client-IP, and the method
 *   overrides X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override (they would bypass `allowedMethods`);
 * - payment and authentication: Authorization (the platform writes it for the `bearer` and `token` auth methods,
 *   and buyers send MPP credentials in it: one writer only; use those auth methods instead), WWW-Authenticate,
 *   Authentication-Info, and X-402/MPP headers (see the prefixes);
 * - prefixes: `Proxy-*`, `CF-*` (Cloudflare's), `X-Forwarded-*`, `Payment-*` (x402 v2 PAYMENT-SIGNATURE,
 *   PAYMENT-REQUIRED, PAYMENT-RESPONSE; MPP Payment-Receipt, …), `X-Payment*` (x402 v1 X-PAYMENT,
 *   X-PAYMENT-RESPONSE, …) and `X-SIWX-*` (the wallet the gateway verified for a sign-in route, with
 *   `Sign-In-With-X`, the sign-in itself).
 * Cookie stays allowed: it is an upstream credential like any other header value, and buyers' cookies are never
 * forwarded.
 */
export const RESERVED_HEADERS: readonly string[] = [
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "expect",
  "forwarded",
  "via",
  "max-forwards",
  "x-real-ip",
  "true-client-ip",
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
  "authorization",
  "www-authenticate",
  "authentication-info",
  "sign-in-with-x",
];

export const RESERVED_HEADER_PREFIXES: readonly string[] = ["proxy-", "cf-", "x-forwarded-", "payment-", "x-payment", "x-siwx-"];

/** Whether a header name belongs to the platform (case-insensitive). */
export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS.includes(lower) || RESERVED_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/** Why a name cannot be a header name at all, or `null`. */
export function headerTokenProblem(name: string): string | null {
  return HTTP_TOKEN.test(name) ? null : "Must be an HTTP header name: letters, digits and ! # $ % & ' * + - . ^ _ ` | ~";
}

/** Why a tenant may not set this header on the upstream request, or `null`. */
export function headerNameProblem(name: string): string | null {
  return headerTokenProblem(name) ?? (isReservedHeader(name) ? `${name} is set by the platform and cannot be configured` : null);
}

/**
 * Every control character but TAB (C0, DEL, C1), and the Unicode line and paragraph separators: in a header value
 * CR, LF and NUL end or split the header, the others are refused by HTTP (RFC 9110 field values) or turned into line
 * breaks by whatever shows them. TAB is field whitespace.
 */
const VALUE_FORBIDDEN = /(?!\t)[\p{Cc}\u2028\u2029]/u;

/** Why a header value (or another one-line secret value) is refused, or `null`. */
export function headerValueProblem(value: string): string | null {
  return VALUE_FORBIDDEN.test(value) ? "Must not contain control characters other than tab, or line separators" : null;
}

/**
 * Buyer headers that are credentials of the buyer's own (`bearer-customer` forwards the buyer's bearer its own way):
 * never forwarded from a buyer, though a tenant may set them as the upstream's credential.
 */
export const BUYER_CREDENTIAL_HEADERS: readonly string[] = ["cookie", "x-api-key", "x-api-secret"];

/** Whether a buyer header is never forwarded upstream, whatever a paywall's `allowedHeaders` say (case-insensitive). */
export function isNeverForwarded(name: string): boolean {
  return isReservedHeader(name) || BUYER_CREDENTIAL_HEADERS.includes(name.toLowerCase());
}

/**
 * Buyer headers every paywall forwards: `Content-Type` describes the body that is forwarded, `Accept` the answer
 * wanted; neither says who the buyer is.
 */
export const ALWAYS_FORWARDED_HEADERS: readonly string[] = ["accept", "content-type"];

/**
 * The names (lower-case, sorted, once each) of the buyer headers a paywall forwards upstream: `Accept`,
 * `Content-Type` and its `allowedHeaders`, less those never forwarded (`isNeverForwarded`) or that are no header
 * name (rows stored before those rules may list them).
 */
export function forwardedHeaderNames(allowedHeaders: readonly string[]): string[] {
  const names = new Set([...ALWAYS_FORWARDED_HEADERS, ...allowedHeaders.map((h) => h.toLowerCase())]);
  return [...names].filter((name) => HTTP_TOKEN.test(name) && !isNeverForwarded(name)).sort();
}

/** Why a paywall may not list this name in `allowedHeaders` (buyer headers it forwards), or `null`. */
export function allowedHeaderProblem(name: string): string | null {
  return (
    headerTokenProblem(name) ??
    (isNeverForwarded(name) ? `${name} is never forwarded from buyers (the platform owns it, or it is a credential)` : null)
  );
}

/** Why a query parameter or JSON field name is refused, or `null`: visible characters without & = # ?. */
export function paramNameProblem(name: string): string | null {
  if (name === "") return "Must not be empty";
  return /[\p{Cc}\s&=#?]/u.test(name) ? "Must not contain &, =, #, ?, whitespace or control characters" : null;
}

/** What `headerText` folds: whitespace, control characters, line separators and bidirectional controls. */
const FOLDED = /[\s\p{Cc}\u202a-\u202e\u2066-\u2069]+/gu;

/**
 * Free text (a description, a name) made fit to travel inside a header parameter: every run of whitespace, control
 * characters (CR, LF, NUL, …), line separators and bidirectional controls becomes one space, the ends are trimmed,
 * and a text longer than `max` characters (code points) is cut to `max`, its last one an ellipsis. What is left may
 * still hold quotes, backslashes and non-ASCII letters: the header's own syntax (a quoted string, base64) carries
 * them. Never throws.
 */
export function headerText(text: string, max: number): string {
  const chars = [...text.replace(FOLDED, " ").trim()];
  return chars.length > max
    ? `${chars
        .slice(0, max - 1)
        .join("")
        .trimEnd()}…`
    : chars.join("");
}
