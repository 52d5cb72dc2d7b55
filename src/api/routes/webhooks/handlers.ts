import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getConfig, keyRing } from "../../../core/config.ts";
import { ApiError, notFound } from "../../../core/http/errors.ts";
import { checkWebhookUrl } from "../../../core/webhooks/endpoint-url.ts";
import { eventBody } from "../../../core/webhooks/events.ts";
import { queueOutbox } from "../../../core/webhooks/outbox.ts";
import { sealWebhookSecret, signingSecrets } from "../../../core/webhooks/secrets.ts";
import type { WebhookEndpointRow } from "../../../db/schema.ts";
import {
  deleteWebhookEndpoint as deleteEndpointRow,
  findWebhookAttempts,
  findWebhookDeliveriesPage,
  findWebhookDelivery,
  findWebhookEndpoint,
  findWebhookEndpointsPage,
  insertWebhookDelivery,
  insertWebhookEndpointWithinCap,
  type NewWebhookDelivery,
  requeueWebhookDelivery,
  updateWebhookEndpoint as updateEndpointRow,
  type WebhookEndpointPatch,
} from "../../../db/webhooks.ts";
import { randomHex } from "../../../lib/ids.ts";
import { newWebhookSecret, SECRET_PREFIX } from "../../../lib/standard-webhooks.ts";
import { listNotModified, rowsState } from "../../conditional.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { recordResponse } from "../../middleware/idempotency.ts";
import { pagination } from "../../paging.ts";
import type * as routes from "./routes.ts";
import { toWebhookDelivery, toWebhookEndpoint } from "./serialize.ts";

/** Endpoints a tenant may hold. */
export const MAX_WEBHOOK_ENDPOINTS_PER_TENANT = 20;

/** A secret as an Idempotency-Key replay shows it: the answer is stored, the secret never is in clear. */
const MASKED_SECRET = `${SECRET_PREFIX}***`;

/** The tenant's endpoint; another tenant's is answered as one that does not exist (404), never 403. */
async function ownEndpoint(c: Context<ApiEnv>, id: string): Promise<WebhookEndpointRow> {
  const row = await findWebhookEndpoint(c.var.db, id);
  if (!row || row.tenantId !== c.var.auth.tenant.id) throw notFound("Webhook endpoint");
  return row;
}

/** Refuses a URL the platform must not POST to (see `checkWebhookUrl`). */
function assertDeliverable(env: Env, url: string): void {
  const verdict = checkWebhookUrl(url, getConfig(env));
  if (!verdict.allowed)
    throw new ApiError("SSRF_BLOCKED", verdict.message, { details: { field: "url", reason: verdict.reason } });
}

export const createWebhookEndpoint: RouteHandler<typeof routes.createWebhookEndpoint, ApiEnv> = async (c) => {
  const body = c.req.valid("json");
  const tenantId = c.var.auth.tenant.id;
  assertDeliverable(c.env, body.url);
  const id = `we_${randomHex(12)}`;
  const secret = newWebhookSecret();
  const now = new Date();
  const row: WebhookEndpointRow = {
    id,
    tenantId,
    url: body.url,
    description: body.description ?? null,
    events: body.events,
    enabled: true,
    disabledReason: null,
    secret: await sealWebhookSecret(keyRing(c.env), tenantId, id, "secret", secret),
    previousSecret: null,
    previousSecretExpiresAt: null,
    consecutiveFailures: 0,
    createdAt: now,
    updatedAt: now,
  };
  const answer = { data: { ...toWebhookEndpoint(row), secret }, meta: meta(c) };
  const recorder = recordResponse(c, 201, { ...answer, data: { ...answer.data, secret: MASKED_SECRET } });
  if (!(await insertWebhookEndpointWithinCap(c.var.db, row, MAX_WEBHOOK_ENDPOINTS_PER_TENANT, recorder))) {
    throw new ApiError(
      "WEBHOOK_ENDPOINT_LIMIT",
      `A tenant may hold at most ${MAX_WEBHOOK_ENDPOINTS_PER_TENANT} webhook endpoints: delete one first`,
    );
  }
  return c.json(answer, 201);
};

export const listWebhookEndpoints: RouteHandler<typeof routes.listWebhookEndpoints, ApiEnv> = async (c) => {
  const { limit, offset } = c.req.valid("query");
  const page = await findWebhookEndpointsPage(c.var.db, c.var.auth.tenant.id, { limit, offset });
  if (await listNotModified(c, rowsState(page.total, page.rows))) return c.body(null, 304);
  return c.json(
    { data: page.rows.map(toWebhookEndpoint), meta: { ...meta(c), pagination: pagination(page.total, limit, offset) } },
    200,
  );
};

export const getWebhookEndpoint: RouteHandler<typeof routes.getWebhookEndpoint, ApiEnv> = async (c) => {
  const row = await ownEndpoint(c, c.req.valid("param").id);
  return c.json({ data: toWebhookEndpoint(row), meta: meta(c) }, 200);
};

export const updateWebhookEndpoint: RouteHandler<typeof routes.updateWebhookEndpoint, ApiEnv> = async (c) => {
  const patch = c.req.valid("json");
  const existing = await ownEndpoint(c, c.req.valid("param").id);
  if (patch.url !== undefined) assertDeliverable(c.env, patch.url);
  const set: WebhookEndpointPatch = {
    ...(patch.url !== undefined ? { url: patch.url } : {}),
    ...(patch.events !== undefined ? { events: patch.events } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    // Enabling resets the run of failures that disabled it; disabling is the tenant's own pause.
    ...(patch.enabled === true ? { enabled: true, disabledReason: null, consecutiveFailures: 0 } : {}),
    ...(patch.enabled === false ? { enabled: false, disabledReason: null } : {}),
    updatedAt: new Date(),
  };
  const answer = { data: toWebhookEndpoint({ ...existing, ...set } as WebhookEndpointRow), meta: meta(c) };
  const updated = await updateEndpointRow(c.var.db, existing.tenantId, existing.id, set, recordResponse(c, 200, answer));
  if (!updated) throw notFound("Webhook endpoint");
  return c.json(c.var.idempotency ? answer : { data: toWebhookEndpoint(updated), meta: meta(c) }, 200);
};

export const deleteWebhookEndpoint: RouteHandler<typeof routes.deleteWebhookEndpoint, ApiEnv> = async (c) => {
  const { id } = await ownEndpoint(c, c.req.valid("param").id);
  const answer = { data: { id, deleted: true as const }, meta: meta(c) };
  if (!(await deleteEndpointRow(c.var.db, c.var.auth.tenant.id, id, recordResponse(c, 200, answer)))) {
    throw notFound("Webhook endpoint");
  }
  return c.json(answer, 200);
};

export const rollWebhookSecret: RouteHandler<typeof routes.rollWebhookSecret, ApiEnv> = async (c) => {
  const { gracePeriodSeconds } = c.req.valid("json");
  const existing = await ownEndpoint(c, c.req.valid("param").id);
  const ring = keyRing(c.env);
  const secret = newWebhookSecret();
  const now = new Date();
  // The current secret, re-sealed for its new field, keeps signing for the grace period (none: dropped at once).
  const [current] = await signingSecrets(ring, { ...existing, previousSecret: null }, now);
  const set: WebhookEndpointPatch = {
    secret: await sealWebhookSecret(ring, existing.tenantId, existing.id, "secret", secret),
    previousSecret:
      gracePeriodSeconds > 0 && current
        ? await sealWebhookSecret(ring, existing.tenantId, existing.id, "previousSecret", current)
        : null,
    previousSecretExpiresAt: gracePeriodSeconds > 0 ? new Date(now.getTime() + gracePeriodSeconds * 1000) : null,
    updatedAt: now,
  };
  const data = toWebhookEndpoint({ ...existing, ...set } as WebhookEndpointRow);
  const answer = { data: { ...data, secret }, meta: meta(c) };
  const recorder = recordResponse(c, 200, { ...answer, data: { ...data, secret: MASKED_SECRET } });
  if (!(await updateEndpointRow(c.var.db, existing.tenantId, existing.id, set, recorder))) throw notFound("Webhook endpoint");
  return c.json(answer, 200);
};

export const sendTestWebhook: RouteHandler<typeof routes.sendTestWebhook, ApiEnv> = async (c) => {
  const endpoint = await ownEndpoint(c, c.req.valid("param").id);
  const now = new Date();
  const id = `msg_test_${randomHex(12)}`;
  const row: NewWebhookDelivery = {
    id,
    tenantId: endpoint.tenantId,
    endpointId: endpoint.id,
    eventType: "test",
    transactionId: null,
    payload: eventBody("test", now, { endpointId: endpoint.id, message: "A test event sent from the API" }),
    status: "pending",
    attempts: 0,
    createdAt: now,
  };
  const answer = { data: toWebhookDelivery({ ...emptyDelivery, ...row } as never, []), meta: meta(c) };
  await insertWebhookDelivery(c.var.db, row, recordResponse(c, 202, answer));
  queueOutbox(c.env, c.executionCtx).deliveries([id]);
  return c.json(answer, 202);
};

const emptyDelivery = {
  lastAttemptAt: null,
  nextAttemptAt: null,
  responseStatus: null,
  latencyMs: null,
  responseBody: null,
  error: null,
};

export const listWebhookDeliveries: RouteHandler<typeof routes.listWebhookDeliveries, ApiEnv> = async (c) => {
  const { limit, offset, status } = c.req.valid("query");
  const endpoint = await ownEndpoint(c, c.req.valid("param").id);
  const page = await findWebhookDeliveriesPage(c.var.db, endpoint.id, { limit, offset }, { status });
  if (await listNotModified(c, rowsState(page.total, page.rows))) return c.body(null, 304);
  return c.json(
    {
      data: page.rows.map(({ row, attempts }) => toWebhookDelivery(row, attempts)),
      meta: { ...meta(c), pagination: pagination(page.total, limit, offset) },
    },
    200,
  );
};

export const retryWebhookDelivery: RouteHandler<typeof routes.retryWebhookDelivery, ApiEnv> = async (c) => {
  const { id, deliveryId } = c.req.valid("param");
  const endpoint = await ownEndpoint(c, id);
  const delivery = await findWebhookDelivery(c.var.db, deliveryId);
  if (!delivery || delivery.endpointId !== endpoint.id) throw notFound("Webhook delivery");
  if (!endpoint.enabled) {
    throw new ApiError("CONFLICT", "The endpoint is disabled: enable it (PATCH enabled: true) before retrying");
  }
  const now = new Date();
  const attempts = await findWebhookAttempts(c.var.db, deliveryId);
  const expected = { ...delivery, status: "pending" as const, nextAttemptAt: now, error: null };
  const answer = { data: toWebhookDelivery(expected, attempts), meta: meta(c) };
  const updated = await requeueWebhookDelivery(c.var.db, deliveryId, now, recordResponse(c, 202, answer));
  if (!updated) throw notFound("Webhook delivery");
  queueOutbox(c.env, c.executionCtx).deliveries([deliveryId]);
  return c.json(answer, 202);
};
