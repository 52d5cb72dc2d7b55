import type { Context } from "hono";
import { contentEtagOf, listEtagOf, noneMatchesTag } from "../lib/etag.ts";
import type { ApiEnv } from "./env.ts";
import { meta } from "./envelope.ts";
import { pagination } from "./paging.ts";

/**
 * A list page whose items carry no version (transactions and events change status or show their paywall's current
 * name; webhook endpoints and deliveries): its `data` serialized once, and that text with everything else the page
 * shows (the total, `extra` such as event stats) names its `ETag`. `304` with no body when `If-None-Match` names it;
 * else the answer is built from the same text, with `meta` (the pagination, and `extra`) new each time.
 */
export async function listAnswer(
  c: Context<ApiEnv>,
  page: { data: readonly unknown[]; total: number; limit: number; offset: number },
  extra?: Record<string, unknown>,
): Promise<Response> {
  const data = JSON.stringify(page.data);
  const extraJson = extra ? JSON.stringify(extra) : "";
  if (await listNotModified(c, `${page.total}\n${extraJson}\n${data}`)) return c.body(null, 304);
  const pageMeta = JSON.stringify({ ...meta(c), pagination: pagination(page.total, page.limit, page.offset), ...extra });
  return c.body(`{"data":${data},"meta":${pageMeta}}`, 200, { "content-type": "application/json" });
}

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
