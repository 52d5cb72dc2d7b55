import type { RouteHandler } from "@hono/zod-openapi";
import {
  createPaywall as createPaywallRow,
  deletePaywall as deletePaywallRow,
  updatePaywall as updatePaywallRow,
} from "../../../core/catalog/paywalls.ts";
import { getConfig } from "../../../core/config.ts";
import { findPaywall, findPaywallsPage } from "../../../db/paywalls.ts";
import { findService } from "../../../db/services.ts";
import { etagOf, ifMatchVersions, noneMatchHits } from "../../../lib/etag.ts";
import { catalogPage } from "../../catalog-pages.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { recordResponse } from "../../middleware/idempotency.ts";
import { writerOf } from "../catalog-writer.ts";
import { assertOwned } from "../guards.ts";
import type * as routes from "./routes.ts";
import { toPaywall } from "./serialize.ts";

export const createPaywall: RouteHandler<typeof routes.createPaywall, ApiEnv> = async (c) => {
  const config = getConfig(c.env);
  // The answer is built before the write: with an Idempotency-Key it is stored in the write's own batch.
  let answer: { data: ReturnType<typeof toPaywall>; meta: ReturnType<typeof meta> } | undefined;
  const row = await createPaywallRow(writerOf(c), c.req.valid("json"), (row) => {
    answer = { data: toPaywall(row, config), meta: meta(c) };
    return recordResponse(c, 201, answer, { ETag: etagOf(row.version) });
  });
  c.header("ETag", etagOf(row.version));
  return c.json(answer ?? { data: toPaywall(row, config), meta: meta(c) }, 201);
};

export const listPaywalls: RouteHandler<typeof routes.listPaywalls, ApiEnv> = async (c) => {
  const { limit, offset, serviceId, enabled } = c.req.valid("query");
  const tenantId = c.var.auth.tenant.id;
  if (serviceId) assertOwned(await findService(c.var.db, serviceId), tenantId, "Service");
  const config = getConfig(c.env);
  return catalogPage(c, "paywalls", { limit, offset, serviceId, enabled }, async () => {
    const page = await findPaywallsPage(c.var.db, tenantId, { limit, offset }, { serviceId, enabled });
    return { catalogVersion: page.catalogVersion, total: page.total, data: page.rows.map((row) => toPaywall(row, config)) };
  });
};

export const getPaywall: RouteHandler<typeof routes.getPaywall, ApiEnv> = async (c) => {
  const row = assertOwned(await findPaywall(c.var.db, c.req.valid("param").id), c.var.auth.tenant.id, "Paywall");
  c.header("ETag", etagOf(row.version));
  if (noneMatchHits(c.req.valid("header")["if-none-match"], row.version)) return c.body(null, 304);
  return c.json({ data: toPaywall(row, getConfig(c.env)), meta: meta(c) }, 200);
};

export const updatePaywall: RouteHandler<typeof routes.updatePaywall, ApiEnv> = async (c) => {
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  const config = getConfig(c.env);
  // With an Idempotency-Key the answer is built from the state read and stored in the write's own batch.
  let recorded: { data: ReturnType<typeof toPaywall>; meta: ReturnType<typeof meta> } | undefined;
  const row = await updatePaywallRow(writerOf(c), c.req.valid("param").id, c.req.valid("json"), versions, (expected) => {
    const answer = { data: toPaywall(expected, config), meta: meta(c) };
    const recorder = recordResponse(c, 200, answer, { ETag: etagOf(expected.version) });
    if (recorder) recorded = answer;
    return recorder;
  });
  c.header("ETag", etagOf(row.version));
  return c.json(recorded ?? { data: toPaywall(row, config), meta: meta(c) }, 200);
};

export const deletePaywall: RouteHandler<typeof routes.deletePaywall, ApiEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  const answer = { data: { id, deleted: true as const }, meta: meta(c) };
  await deletePaywallRow(writerOf(c), id, versions, recordResponse(c, 200, answer));
  return c.json(answer, 200);
};
