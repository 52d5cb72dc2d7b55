import type { Context } from "hono";
import { contentEtagOf, listEtagOf, noneMatchesTag } from "../lib/etag.ts";

/**
 * The state of a page whose items carry no version (transactions change status; both history lists show their
 * paywall's current name): the total, anything else the page shows (`extra`, e.g. event stats) and the rows as read.
 */
export const rowsState = (total: number, rows: readonly unknown[], extra?: unknown): string =>
  JSON.stringify([total, extra ?? null, rows]);

/**
 * Sets the `ETag` of one resource without a version (`contentEtagOf` of its answer's `data`) and tells whether the
 * request's `If-None-Match` names it: then the handler answers `304` with no body.
 */
export async function itemNotModified(c: Context, data: unknown): Promise<boolean> {
  const etag = await contentEtagOf(JSON.stringify(data));
  c.header("ETag", etag);
  return noneMatchesTag(c.req.header("if-none-match"), etag);
}

/**
 * Sets a list page's `ETag` (the tag of `state`, `listEtagOf`) and tells whether the request's `If-None-Match` names
 * it: then the handler answers `304` with no body, before serializing anything.
 */
export async function listNotModified(c: Context, state: string): Promise<boolean> {
  const etag = await listEtagOf(state);
  c.header("ETag", etag);
  return noneMatchesTag(c.req.header("if-none-match"), etag);
}
