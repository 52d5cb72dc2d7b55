import type { RouteHandler } from "@hono/zod-openapi";
import {
  createService as createServiceRow,
  deleteService as deleteServiceRow,
  updateService as updateServiceRow,
} from "../../../core/catalog/services.ts";
import { getConfig } from "../../../core/config.ts";
import { findServicesPage, findServicesPageVersions, findServiceWithPaywalls } from "../../../db/services.ts";
import { BoundedTextCache } from "../../../lib/bounded-cache.ts";
import { etagOf, ifMatchVersions, noneMatchHits } from "../../../lib/etag.ts";
import { listNotModified, versionsState } from "../../conditional.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { recordResponse } from "../../middleware/idempotency.ts";
import { pagination } from "../../paging.ts";
import { writerOf } from "../catalog-writer.ts";
import { assertOwned } from "../guards.ts";
import type * as routes from "./routes.ts";
import { toService } from "./serialize.ts";

export const createService: RouteHandler<typeof routes.createService, ApiEnv> = async (c) => {
  const config = getConfig(c.env);
  // The answer is built before the write: with an Idempotency-Key it is stored in the write's own batch.
  let answer: { data: ReturnType<typeof toService>; meta: ReturnType<typeof meta> } | undefined;
  const row = await createServiceRow(writerOf(c), c.req.valid("json"), (row) => {
    answer = { data: toService(row, [], config), meta: meta(c) };
    return recordResponse(c, 201, answer, { ETag: etagOf(row.version) });
  });
  c.header("ETag", etagOf(row.version));
  return c.json(answer ?? { data: toService(row, [], config), meta: meta(c) }, 201);
};

/**
 * Serialized `data` arrays of services pages, bounded (least recently used first out). The key holds what the
 * serialization reads besides the rows (the payment origin and the facilitators), the tenant, the query and the
 * page's state, so an entry is only ever read for the very state it was built from, and a change makes a new key
 * (the old entry ages out).
 */
const servicesPages = new BoundedTextCache(8 * 1024 * 1024);

/**
 * One narrow statement first (the page's ids and versions, and its total) gives the page's `ETag`: `304` if the
 * client has it, else the serialized page kept for that tag, else the full page read, serialized and kept. The answer
 * is the same JSON a `c.json` would give; only `meta` is new each time.
 */
export const listServices: RouteHandler<typeof routes.listServices, ApiEnv> = async (c) => {
  const { limit, offset, mode } = c.req.valid("query");
  const tenantId = c.var.auth.tenant.id;
  const config = getConfig(c.env);
  const versions = await findServicesPageVersions(c.var.db, tenantId, { limit, offset }, { mode });
  const state = versionsState(versions.total, versions.items);
  if (await listNotModified(c, state)) return c.body(null, 304);
  const { paymentBaseUrl, facilitatorUrl } = config;
  const keyOf = (state: string) =>
    [paymentBaseUrl, facilitatorUrl.testnet, facilitatorUrl.mainnet, tenantId, mode ?? "", limit, offset, state].join("\n");
  let total = versions.total;
  let data = servicesPages.get(keyOf(state));
  if (data === undefined) {
    const page = await findServicesPage(c.var.db, tenantId, { limit, offset }, { mode });
    // The page may have changed since the narrow read: it is tagged and kept as read now.
    const read = versionsState(
      page.total,
      page.items.map(({ service }) => service),
    );
    if (read !== state) await listNotModified(c, read);
    total = page.total;
    data = JSON.stringify(page.items.map(({ service, paywalls }) => toService(service, paywalls, config)));
    servicesPages.set(keyOf(read), data);
  }
  const pageMeta = JSON.stringify({ ...meta(c), pagination: pagination(total, limit, offset) });
  return c.body(`{"data":${data},"meta":${pageMeta}}`, 200, { "content-type": "application/json" });
};

export const getService: RouteHandler<typeof routes.getService, ApiEnv> = async (c) => {
  const found = await findServiceWithPaywalls(c.var.db, c.req.valid("param").id);
  const service = assertOwned(found?.service, c.var.auth.tenant.id, "Service");
  c.header("ETag", etagOf(service.version));
  if (noneMatchHits(c.req.valid("header")["if-none-match"], service.version)) return c.body(null, 304);
  return c.json({ data: toService(service, found?.paywalls ?? [], getConfig(c.env)), meta: meta(c) }, 200);
};

export const updateService: RouteHandler<typeof routes.updateService, ApiEnv> = async (c) => {
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  const config = getConfig(c.env);
  // With an Idempotency-Key the answer is built from the state read and stored in the write's own batch.
  let recorded: { data: ReturnType<typeof toService>; meta: ReturnType<typeof meta> } | undefined;
  const result = await updateServiceRow(
    writerOf(c),
    c.req.valid("param").id,
    c.req.valid("json"),
    versions,
    (expected, paywalls) => {
      const answer = { data: toService(expected, paywalls, config), meta: meta(c) };
      const recorder = recordResponse(c, 200, answer, { ETag: etagOf(expected.version) });
      if (recorder) recorded = answer;
      return recorder;
    },
  );
  c.header("ETag", etagOf(result.service.version));
  return c.json(recorded ?? { data: toService(result.service, result.paywalls, config), meta: meta(c) }, 200);
};

export const deleteService: RouteHandler<typeof routes.deleteService, ApiEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  const answer = { data: { id, deleted: true as const }, meta: meta(c) };
  await deleteServiceRow(writerOf(c), id, versions, recordResponse(c, 200, answer));
  return c.json(answer, 200);
};
