import { sha256Hex } from "./ids.ts";

/**
 * Strong entity tags of services and paywalls: `"v<version>"`, the row's version counter. The resource's id is in
 * its URL, so the version alone tells two states of one resource apart.
 */
export const etagOf = (version: number): string => `"v${version}"`;

/**
 * The strong entity tag of a list page: `"l<32 hex>"`, the first half of the SHA-256 of `state`, a text naming
 * everything the page shows (its total, and each item's id and version, or the item's stored values when it has no
 * version). The list's URL holds the query, so the state alone tells two answers of one URL apart. Never a `"v…"`
 * tag: an item's `If-Match` cannot be given a list's tag.
 */
export const listEtagOf = async (state: string): Promise<string> => `"l${(await sha256Hex(state)).slice(0, 32)}"`;

/**
 * The strong entity tag of one resource that has no version (a transaction, an event, a webhook endpoint, a discovery
 * preview): `"c<32 hex>"`, the first half of the SHA-256 of `content`, what its answer's `data` holds.
 */
export const contentEtagOf = async (content: string): Promise<string> => `"c${(await sha256Hex(content)).slice(0, 32)}"`;

/** The weak form of a strong tag: another representation of the same state, such as its gzip answer (RFC 9110 §8.8.1). */
export const weakEtagOf = (etag: string): string => `W/${etag}`;

/** True when an `If-None-Match` header names `etag` (weak comparison, RFC 9110 §13.1.2) or is `*`: the GET answers 304. */
export function noneMatchesTag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = parseTags(header);
  return tags === "*" || tags.some((t) => `"${t.opaque}"` === etag);
}

const TAG = /^(W\/)?"([^"]*)"$/;

/** The entity tags of an `If-Match` / `If-None-Match` list (RFC 9110): `*`, or each tag with its weakness. */
function parseTags(header: string): "*" | { weak: boolean; opaque: string }[] {
  if (header.trim() === "*") return "*";
  const tags: { weak: boolean; opaque: string }[] = [];
  for (const part of header.split(",")) {
    const match = TAG.exec(part.trim());
    if (match) tags.push({ weak: Boolean(match[1]), opaque: match[2] as string });
  }
  return tags;
}

const versionOf = (opaque: string): number | undefined => {
  const match = /^v([1-9][0-9]{0,14})$/.exec(opaque);
  return match ? Number(match[1]) : undefined;
};

/**
 * The versions an `If-Match` header accepts, for the write's own `WHERE version IN (…)`: `undefined` when the
 * header is absent or `*` (any current state), else the versions of its strong tags (weak tags never match, RFC
 * 9110 §13.1.1; a malformed header matches nothing, so the write is refused with 412). An empty header is
 * malformed too (RFC 9110 `If-Match = "*" / #entity-tag` needs at least one tag): it matches nothing, never "no
 * condition", so a client whose tag variable came out empty does not overwrite someone else's change.
 */
export function ifMatchVersions(header: string | undefined): number[] | undefined {
  if (header === undefined) return undefined;
  const tags = parseTags(header);
  if (tags === "*") return undefined;
  return tags.flatMap((t) => {
    const v = t.weak ? undefined : versionOf(t.opaque);
    return v === undefined ? [] : [v];
  });
}

/** True when an `If-None-Match` header names the current version (weak comparison): the GET answers 304. */
export function noneMatchHits(header: string | undefined, version: number): boolean {
  if (header === undefined) return false;
  const tags = parseTags(header);
  return tags === "*" || tags.some((t) => versionOf(t.opaque) === version);
}
