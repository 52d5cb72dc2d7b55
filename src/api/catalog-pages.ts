import type { Context } from "hono";
import { getConfig } from "../core/config.ts";
import { findCatalogVersion } from "../db/catalog-versions.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";
import { listEtagOf, weakEtagOf } from "../lib/etag.ts";
import { acceptsGzip, clientAcceptEncoding, type GzipHead, gzipAnswer, gzipHead } from "../lib/gzip-kept.ts";
import { listMeta, notModified } from "./conditional.ts";
import type { ApiEnv } from "./env.ts";

/** A page kept in this isolate: its tag, its total, and its answer up to `meta`, as UTF-8 bytes. */
interface KeptPage {
  etag: string;
  total: number;
  /** `{"data":[…],"meta":` */
  head: Uint8Array;
  /** The same, compressed once for clients that accept gzip. */
  gzip: GzipHead;
}

/** Services and paywalls pages kept in this isolate, 8 MiB at most (least recently used first out). */
const pages = new BoundedCache<KeptPage>(8 * 1024 * 1024, (page) => page.head.length + page.gzip.deflated.length);
const utf8 = new TextEncoder();

/** A page of the catalog as read: the catalog version it was read at, its total and its items, serialized. */
export interface CatalogPageRead {
  catalogVersion: number;
  total: number;
  data: unknown[];
}

/**
 * A page of the tenant's catalog (`GET /v1/services`, `GET /v1/paywalls`). One point read of the tenant's catalog
 * version (migrations/0019: every write of its services or paywalls moves it) names the page's state with its query:
 * its `ETag` (`304` when the client holds it) and the key of the page kept in this isolate. Only when the page is not
 * kept is it read (with the version, in one batch), serialized and kept under the version it was read at, so a kept
 * page is only ever served for the very catalog it was built from. The state also holds what serialization reads
 * besides the rows (the payment origin and the facilitators). The answer is the JSON `c.json` would give, sent from
 * bytes encoded once; only `meta` is new each time. A client that accepts gzip gets the page compressed once too, with
 * its `meta` appended uncompressed to the same gzip member (src/lib/gzip-kept.ts), under the weak form of the tag.
 */
export async function catalogPage(
  c: Context<ApiEnv>,
  list: "services" | "paywalls",
  query: { limit: number; offset: number } & Record<string, unknown>,
  read: () => Promise<CatalogPageRead>,
): Promise<Response> {
  const tenantId = c.var.auth.tenant.id;
  const { paymentBaseUrl, facilitatorUrl } = getConfig(c.env);
  const stateAt = (version: number) =>
    [list, paymentBaseUrl, facilitatorUrl.testnet, facilitatorUrl.mainnet, tenantId, JSON.stringify(query), version].join("\n");
  const state = stateAt(await findCatalogVersion(c.var.db, tenantId));
  let page = pages.get(state);
  const gzip = acceptsGzip(clientAcceptEncoding(c.req.raw));
  c.header("Vary", "Accept-Encoding", { append: true });
  const sentAs = (etag: string) => (gzip ? weakEtagOf(etag) : etag);
  const etag = page?.etag ?? (await listEtagOf(state));
  if (notModified(c, etag, sentAs(etag))) return c.body(null, 304);
  if (page === undefined) {
    const fresh = await read();
    // The catalog may have moved since the version was read: the page is tagged and kept as read now.
    const readState = stateAt(fresh.catalogVersion);
    const head = utf8.encode(`{"data":${JSON.stringify(fresh.data)},"meta":`);
    page = { etag: readState === state ? etag : await listEtagOf(readState), total: fresh.total, head, gzip: gzipHead(head) };
    pages.set(readState, page);
    c.header("ETag", sentAs(page.etag));
  }
  const tail = utf8.encode(`${listMeta(c, { total: page.total, limit: query.limit, offset: query.offset })}}`);
  if (gzip) {
    // Hono's answer gives the headers set so far; the body goes in a Response of its own, sent as compressed here
    // (`encodeBody: "manual"`): the runtime would otherwise compress it again for its Content-Encoding.
    const { headers } = c.body(null, 200, { "content-type": "application/json", "content-encoding": "gzip" });
    return new Response(gzipAnswer(page.gzip, tail), { status: 200, headers, encodeBody: "manual" });
  }
  const body = new Uint8Array(page.head.length + tail.length);
  body.set(page.head);
  body.set(tail, page.head.length);
  return c.body(body, 200, { "content-type": "application/json" });
}
