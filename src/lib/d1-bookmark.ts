/** The header a client sends its last D1 bookmark in, and every API answer carries the request's. */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

/**
 * A D1 bookmark as D1 writes them: hex groups joined by dashes (e.g. `0000000c-00000004-00004fd8-` then 32 hex
 * digits), lexically ordered from oldest to newest. Anything else is not passed to D1.
 */
const BOOKMARK = /^[0-9a-f]{8}(?:-[0-9a-f]{8}){2}-[0-9a-f]{32}$/;

export const isBookmark = (value: string): boolean => BOOKMARK.test(value);

/**
 * The D1 session constraint of a request (D1's Sessions API): a write starts at the primary (`first-primary`); a
 * read starts at the client's bookmark (a copy at least that new), or without one anywhere (`first-unconstrained`).
 * `undefined`: the bookmark sent is not one.
 */
export function sessionConstraint(method: string, bookmark: string | undefined): string | undefined {
  if (method !== "GET" && method !== "HEAD") return "first-primary";
  if (bookmark === undefined) return "first-unconstrained";
  const trimmed = bookmark.trim();
  return isBookmark(trimmed) ? trimmed : undefined;
}
