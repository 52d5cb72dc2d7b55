/**
 * Rules for URL text and URL paths we store: what is checked is what is stored and later used.
 *
 * - URL text (`baseUrl`, `targetUrl`, `docs*`): no control character (C0, DEL, C1), no whitespace of any kind and
 *   no backslash. WHATWG parsing silently drops TAB/CR/LF and reads `\` as `/`, while other parsers do not, so two
 *   programs could see two hosts in one text. The stored form is the parsed URL's `href`.
 * - Route paths (`targetRoute`, `publicRoutes`, `siwxRoutes`): an absolute path of RFC 3986 path characters,
 *   starting with exactly one `/` and without `.` or `..` segments (also spelled `%2e`, also between an encoded `/`
 *   or `\`, `%2F` / `%5C`), so joining it to a service's `baseUrl` can never change the origin or climb its path.
 */

/** Any control character, any Unicode whitespace, or a backslash. */
const URL_TEXT_FORBIDDEN = /[\p{Cc}\s\\]/u;

/** Why URL text is refused, or `null` if its characters are acceptable (the URL itself is judged separately). */
export function urlTextProblem(text: string): string | null {
  return URL_TEXT_FORBIDDEN.test(text) ? "Must not contain whitespace, control characters or a backslash" : null;
}

/**
 * The authority of an absolute URL's text: after `scheme:` and any slashes (WHATWG reads `http:host`, `http:/host` and
 * `http:///host` alike), up to the first `/`, `?` or `#`.
 */
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/*([^/?#\\]*)/i;

/**
 * Whether the URL text has an `@` in its authority: a user name or password, even an empty one (`http://@host/`,
 * `http://:@host/`), which WHATWG parsing drops from `href` while other parsers may read the authority differently.
 */
export const hasUserinfo = (text: string): boolean => AUTHORITY.exec(text)?.[1]?.includes("@") ?? false;

/** RFC 3986 `pchar` and `/`: unreserved, sub-delims, `:`, `@`, and `%` (which must start a `%XX` escape). */
const PATH_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/;
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/** Why a route path is refused, or `null` if it is an acceptable absolute path. */
export function routePathProblem(route: string): string | null {
  if (!route.startsWith("/")) return "Must start with /";
  if (route.startsWith("//")) return "Must start with a single / (// would name another host)";
  if (!PATH_CHARS.test(route)) {
    return "Only URL path characters: letters, digits and - . _ ~ ! $ & ' ( ) * + , ; = : @ / %XX (no spaces, controls, \\, ? or #)";
  }
  if (BAD_ESCAPE.test(route)) return "A % must start a %XX escape";
  // Segments as a server that decodes before it resolves would see them: `%2F` and `%5C` (an encoded `/` or `\`)
  // split segments too, so `/..%2F..%2Fx` and `/%2e%2e%5Cx` climb like `/../../x`.
  const segments = route.split(/\/|%2f|%5c/i).map((segment) => segment.replace(/%2e/gi, "."));
  if (segments.some((segment) => segment === "." || segment === "..")) return "Must not contain . or .. segments";
  return null;
}

/** A name made only of dots (`.`, `..`, …) collapses or climbs when it becomes a URL path segment. */
export const isDotsOnly = (name: string) => /^\.+$/.test(name);
