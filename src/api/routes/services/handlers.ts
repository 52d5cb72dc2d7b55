import type { RouteHandler } from "@hono/zod-openapi";
import {
  createService as createServiceRow,
  deleteService as deleteServiceRow,
  updateService as updateServiceRow,
} from "../../../core/catalog/services.ts";
import { getConfig } from "../../../core/config.ts";
import { findServicesPage, findServiceWithPaywalls } from "../../../db/services.ts";
import { etagOf, ifMatchVersions, noneMatchHits } from "../../../lib/etag.ts";
import { catalogPage } from "../../catalog-pages.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { recordResponse } from "../../middleware/idempotency.ts";
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

/** A page of the tenant's services, kept per catalog version (src/api/catalog-pages.ts). */
export const listServices: RouteHandler<typeof routes.listServices, ApiEnv> = async (c) => {
  const { limit, offset, mode } = c.req.valid("query");
  const config = getConfig(c.env);
  return catalogPage(c, "services", { limit, offset, mode }, async () => {
    const page = await findServicesPage(c.var.db, c.var.auth.tenant.id, { limit, offset }, { mode });
    return {
      catalogVersion: page.catalogVersion,
      total: page.total,
      data: page.items.map(({ service, paywalls }) => toService(service, paywalls, config)),
    };
  });
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
