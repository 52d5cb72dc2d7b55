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
  if (notModified(c, await listEtagOf(`${page.total}\n${extraJson}\n${data}`))) return c.body(null, 304);
  return c.body(`{"data":${data},"meta":${listMeta(c, page, extra)}}`, 200, { "content-type": "application/json" });
}

/** A list answer's `meta`, serialized: the request's, the page's `pagination`, and `extra` (new for every answer). */
export const listMeta = (
  c: Context<ApiEnv>,
  page: { total: number; limit: number; offset: number },
  extra?: Record<string, unknown>,
): string => JSON.stringify({ ...meta(c), pagination: pagination(page.total, page.limit, page.offset), ...extra });

/**
 * Sets the `ETag` of one resource without a version (`contentEtagOf` of its answer's `data`) and tells whether the
 * request's `If-None-Match` names it: then the handler answers `304` with no body.
 */
export async function itemNotModified(c: Context, data: unknown): Promise<boolean> {
  return notModified(c, await contentEtagOf(JSON.stringify(data)));
}

/**
 * Sets the answer's `ETag` and tells whether the request's `If-None-Match` names it: then the answer is `304`. `sent`
 * is the tag as the answer carries it when it is another form of `etag` (a compressed answer's weak tag).
 */
export function notModified(c: Context, etag: string, sent = etag): boolean {
  c.header("ETag", sent);
  return noneMatchesTag(c.req.header("if-none-match"), etag);
}
