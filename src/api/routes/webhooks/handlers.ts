import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  createWebhookEndpoint as createEndpoint,
  deleteWebhookEndpoint as deleteEndpoint,
  ownWebhookEndpoint,
  retryWebhookDelivery as retryDelivery,
  rollWebhookSecret as rollSecret,
  sendTestEvent,
  updateWebhookEndpoint as updateEndpoint,
  type WebhookChangeBy,
} from "../../../core/webhooks/endpoints.ts";
import type { WebhookEndpointRow } from "../../../db/schema.ts";
import { findWebhookDeliveriesPage, findWebhookEndpointsPage } from "../../../db/webhooks.ts";
import { SECRET_PREFIX } from "../../../lib/standard-webhooks.ts";
import { itemNotModified, listAnswer } from "../../conditional.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { recordResponse } from "../../middleware/idempotency.ts";
import type * as routes from "./routes.ts";
import { toWebhookDelivery, toWebhookEndpoint } from "./serialize.ts";

/** A secret as an Idempotency-Key replay shows it: the answer is stored, the secret never is in clear. */
const MASKED_SECRET = `${SECRET_PREFIX}***`;

/** Changes through the API are recorded as the API's (as services and paywalls are). */
const BY_API: WebhookChangeBy = { actor: "api", ip: null };

/** The tenant's endpoint; another tenant's is answered as one that does not exist (404), never 403. */
const ownEndpoint = (c: Context<ApiEnv>, id: string): Promise<WebhookEndpointRow> =>
  ownWebhookEndpoint(c.var.db, c.var.auth.tenant.id, id);

export const createWebhookEndpoint: RouteHandler<typeof routes.createWebhookEndpoint, ApiEnv> = async (c) => {
  const body = c.req.valid("json");
  const { row, secret } = await createEndpoint(c.var.db, c.env, c.var.auth.tenant.id, body, new Date(), BY_API, (stored) =>
    recordResponse(c, 201, { data: { ...toWebhookEndpoint(stored), secret: MASKED_SECRET }, meta: meta(c) }),
  );
  return c.json({ data: { ...toWebhookEndpoint(row), secret }, meta: meta(c) }, 201);
};

export const listWebhookEndpoints: RouteHandler<typeof routes.listWebhookEndpoints, ApiEnv> = async (c) => {
  const { limit, offset } = c.req.valid("query");
  const page = await findWebhookEndpointsPage(c.var.db, c.var.auth.tenant.id, { limit, offset });
  return listAnswer(c, { data: page.rows.map(toWebhookEndpoint), total: page.total, limit, offset });
};

export const getWebhookEndpoint: RouteHandler<typeof routes.getWebhookEndpoint, ApiEnv> = async (c) => {
  const row = await ownEndpoint(c, c.req.valid("param").id);
  const data = toWebhookEndpoint(row);
  if (await itemNotModified(c, data)) return c.body(null, 304);
  return c.json({ data, meta: meta(c) }, 200);
};

export const updateWebhookEndpoint: RouteHandler<typeof routes.updateWebhookEndpoint, ApiEnv> = async (c) => {
  const patch = c.req.valid("json");
  const existing = await ownEndpoint(c, c.req.valid("param").id);
  let answer: { data: ReturnType<typeof toWebhookEndpoint>; meta: ReturnType<typeof meta> } | undefined;
  const updated = await updateEndpoint(c.var.db, c.env, existing, patch, new Date(), BY_API, (expected) => {
    answer = { data: toWebhookEndpoint(expected), meta: meta(c) };
    return recordResponse(c, 200, answer);
  });
  return c.json(c.var.idempotency && answer ? answer : { data: toWebhookEndpoint(updated), meta: meta(c) }, 200);
};

export const deleteWebhookEndpoint: RouteHandler<typeof routes.deleteWebhookEndpoint, ApiEnv> = async (c) => {
  const endpoint = await ownEndpoint(c, c.req.valid("param").id);
  const answer = { data: { id: endpoint.id, deleted: true as const }, meta: meta(c) };
  await deleteEndpoint(c.var.db, endpoint, new Date(), BY_API, recordResponse(c, 200, answer));
  return c.json(answer, 200);
};

export const rollWebhookSecret: RouteHandler<typeof routes.rollWebhookSecret, ApiEnv> = async (c) => {
  const { gracePeriodSeconds } = c.req.valid("json");
  const existing = await ownEndpoint(c, c.req.valid("param").id);
  const { row, secret } = await rollSecret(c.var.db, c.env, existing, gracePeriodSeconds, new Date(), BY_API, (stored) =>
    recordResponse(c, 200, { data: { ...toWebhookEndpoint(stored), secret: MASKED_SECRET }, meta: meta(c) }),
  );
  return c.json({ data: { ...toWebhookEndpoint(row), secret }, meta: meta(c) }, 200);
};

export const sendTestWebhook: RouteHandler<typeof routes.sendTestWebhook, ApiEnv> = async (c) => {
  const endpoint = await ownEndpoint(c, c.req.valid("param").id);
  const row = await sendTestEvent(c.var.db, c.env, c.executionCtx, endpoint, new Date(), "API", (stored) =>
    recordResponse(c, 202, { data: toWebhookDelivery(stored, []), meta: meta(c) }),
  );
  return c.json({ data: toWebhookDelivery(row, []), meta: meta(c) }, 202);
};

export const listWebhookDeliveries: RouteHandler<typeof routes.listWebhookDeliveries, ApiEnv> = async (c) => {
  const { limit, offset, status } = c.req.valid("query");
  const endpoint = await ownEndpoint(c, c.req.valid("param").id);
  const page = await findWebhookDeliveriesPage(c.var.db, endpoint.id, { limit, offset }, { status });
  const data = page.rows.map(({ row, attempts }) => toWebhookDelivery(row, attempts));
  return listAnswer(c, { data, total: page.total, limit, offset });
};

export const retryWebhookDelivery: RouteHandler<typeof routes.retryWebhookDelivery, ApiEnv> = async (c) => {
  const { id, deliveryId } = c.req.valid("param");
  const endpoint = await ownEndpoint(c, id);
  const { row, attempts } = await retryDelivery(
    c.var.db,
    c.env,
    c.executionCtx,
    endpoint,
    deliveryId,
    new Date(),
    (expected, log) => recordResponse(c, 202, { data: toWebhookDelivery(expected, log), meta: meta(c) }),
  );
  return c.json({ data: toWebhookDelivery(row, attempts), meta: meta(c) }, 202);
};
