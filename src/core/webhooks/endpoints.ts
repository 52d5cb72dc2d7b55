/**
 * Webhook endpoints and their deliveries: the one set of rules for creating, changing and deleting endpoints, sending
 * a test event and retrying a delivery, used by the API (`/v1/webhook-endpoints`) and by the dashboard's Webhooks
 * page. The request schemas (also the API's OpenAPI document) live here too.
 *
 * The API passes `record` to store its idempotent answer in the write's own batch: it is given the row as it will be
 * stored. Every change of an endpoint is an account event (the dashboard's Activity page), written in the change's own
 * batch: `by` says who made it.
 */
import { z } from "@hono/zod-openapi";
import { auditOf as accountAudit } from "../../db/account-events.ts";
import type { Db } from "../../db/client.ts";
import type { ResponseRecorder } from "../../db/idempotency.ts";
import type { Audit } from "../../db/page.ts";
import {
  type AccountEventActor,
  WEBHOOK_EVENT_TYPES,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from "../../db/schema.ts";
import {
  deleteWebhookEndpoint as deleteEndpointRow,
  findWebhookAttempts,
  findWebhookDelivery,
  findWebhookEndpoint,
  insertWebhookDelivery,
  insertWebhookEndpointWithinCap,
  type NewWebhookDelivery,
  requeueWebhookDelivery,
  updateWebhookEndpoint as updateEndpointRow,
  type WebhookEndpointPatch,
} from "../../db/webhooks.ts";
import { randomHex } from "../../lib/ids.ts";
import { newWebhookSecret } from "../../lib/standard-webhooks.ts";
import { TextSchema, UrlSchema } from "../catalog/fields.ts";
import { changedKeys } from "../catalog/services.ts";
import { getConfig, keyRing } from "../config.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { checkWebhookUrl } from "./endpoint-url.ts";
import { eventBody } from "./events.ts";
import { queueOutbox } from "./outbox.ts";
import { sealWebhookSecret, signingSecrets } from "./secrets.ts";

/** Endpoints a tenant may hold. */
export const MAX_WEBHOOK_ENDPOINTS_PER_TENANT = 20;

export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES).openapi("WebhookEventType");

const EventListSchema = z
  .array(WebhookEventTypeSchema)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((list) => new Set(list).size === list.length, { message: "Event types must not repeat" })
  .openapi({ uniqueItems: true, description: "The event types sent to this endpoint" });

const UrlField = UrlSchema.openapi({
  description:
    "Where events are POSTed: a public http(s) URL (the rules of upstream URLs; private and internal addresses are refused, at creation and before every attempt). Redirects are not followed.",
  example: "https://hooks.example.com/paywall",
});

export const WebhookEndpointCreateSchema = z
  .strictObject({
    url: UrlField,
    events: EventListSchema,
    description: TextSchema(500).optional(),
  })
  .openapi("WebhookEndpointCreate");

export const WebhookEndpointUpdateSchema = z
  .strictObject({
    url: UrlField.optional(),
    events: EventListSchema.optional(),
    description: TextSchema(500).nullable().optional(),
    enabled: z.boolean().optional().openapi({
      description: "false pauses deliveries; true re-enables an endpoint (also one the platform disabled after failures)",
    }),
  })
  .openapi("WebhookEndpointUpdate");

export type WebhookEndpointCreate = z.infer<typeof WebhookEndpointCreateSchema>;
export type WebhookEndpointUpdate = z.infer<typeof WebhookEndpointUpdateSchema>;

/** Where a request came from, for the test event's message. */
export type WebhookActor = "API" | "dashboard";

/** Who changes an endpoint: recorded with the change as an account event. */
export interface WebhookChangeBy {
  actor: AccountEventActor;
  ip: string | null;
}

/** The account event of a change of `endpoint`, written in the change's batch when `condition` holds. */
const auditOf = (
  db: Db,
  endpoint: Pick<WebhookEndpointRow, "tenantId" | "url">,
  now: Date,
  by: WebhookChangeBy,
  action: string,
  detail?: string,
): Audit => accountAudit(db, { tenantId: endpoint.tenantId, actor: by.actor, ip: by.ip, at: now }, action, endpoint.url, detail);

/** The tenant's endpoint; another tenant's is answered as one that does not exist (404), never 403. */
export async function ownWebhookEndpoint(db: Db, tenantId: string, id: string): Promise<WebhookEndpointRow> {
  const row = await findWebhookEndpoint(db, id);
  if (!row || row.tenantId !== tenantId) throw notFound("Webhook endpoint");
  return row;
}

/** Refuses a URL the platform must not POST to (see `checkWebhookUrl`). */
function assertDeliverable(env: Env, url: string): void {
  const verdict = checkWebhookUrl(url, getConfig(env));
  if (!verdict.allowed)
    throw new ApiError("SSRF_BLOCKED", verdict.message, {
      details: [{ path: "url", message: verdict.message, reason: verdict.reason }],
    });
}

/** Creates an endpoint from a valid body; returns the row as stored and its signing secret (shown once). */
export async function createWebhookEndpoint(
  db: Db,
  env: Env,
  tenantId: string,
  body: WebhookEndpointCreate,
  now: Date,
  by: WebhookChangeBy,
  record?: (row: WebhookEndpointRow, secret: string) => ResponseRecorder | undefined,
): Promise<{ row: WebhookEndpointRow; secret: string }> {
  assertDeliverable(env, body.url);
  const id = `we_${randomHex(12)}`;
  const secret = newWebhookSecret();
  const row: WebhookEndpointRow = {
    id,
    tenantId,
    url: body.url,
    description: body.description ?? null,
    events: body.events,
    enabled: true,
    disabledReason: null,
    secret: await sealWebhookSecret(keyRing(env), tenantId, id, "secret", secret),
    previousSecret: null,
    previousSecretExpiresAt: null,
    consecutiveFailures: 0,
    createdAt: now,
    updatedAt: now,
  };
  const audit = auditOf(db, row, now, by, "webhook-endpoint-created", body.events.join(", "));
  if (!(await insertWebhookEndpointWithinCap(db, row, MAX_WEBHOOK_ENDPOINTS_PER_TENANT, record?.(row, secret), audit))) {
    throw new ApiError(
      "WEBHOOK_ENDPOINT_LIMIT",
      `A tenant may hold at most ${MAX_WEBHOOK_ENDPOINTS_PER_TENANT} webhook endpoints: delete one first`,
    );
  }
  return { row, secret };
}

/** Changes the tenant's endpoint; returns the row after the change. */
export async function updateWebhookEndpoint(
  db: Db,
  env: Env,
  existing: WebhookEndpointRow,
  patch: WebhookEndpointUpdate,
  now: Date,
  by: WebhookChangeBy,
  record?: (row: WebhookEndpointRow) => ResponseRecorder | undefined,
): Promise<WebhookEndpointRow> {
  if (patch.url !== undefined) assertDeliverable(env, patch.url);
  const set: WebhookEndpointPatch = {
    ...(patch.url !== undefined ? { url: patch.url } : {}),
    ...(patch.events !== undefined ? { events: patch.events } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    // Enabling resets the run of failures that disabled it; disabling is the tenant's own pause.
    ...(patch.enabled === true ? { enabled: true, disabledReason: null, consecutiveFailures: 0 } : {}),
    ...(patch.enabled === false ? { enabled: false, disabledReason: null } : {}),
    updatedAt: now,
  };
  const expected = { ...existing, ...set } as WebhookEndpointRow;
  const changed = changedKeys(patch, existing);
  const action =
    changed.length === 1 && changed[0] === "enabled"
      ? patch.enabled
        ? "webhook-endpoint-enabled"
        : "webhook-endpoint-disabled"
      : "webhook-endpoint-updated";
  const audit = auditOf(
    db,
    expected,
    now,
    by,
    action,
    action === "webhook-endpoint-updated" ? changed.join(", ") || "nothing" : undefined,
  );
  const updated = await updateEndpointRow(db, existing.tenantId, existing.id, set, record?.(expected), audit);
  if (!updated) throw notFound("Webhook endpoint");
  return updated;
}

/** Deletes the tenant's endpoint with its delivery log. */
export async function deleteWebhookEndpoint(
  db: Db,
  endpoint: WebhookEndpointRow,
  now: Date,
  by: WebhookChangeBy,
  recorder?: ResponseRecorder,
): Promise<void> {
  const audit = auditOf(db, endpoint, now, by, "webhook-endpoint-deleted");
  if (!(await deleteEndpointRow(db, endpoint.tenantId, endpoint.id, recorder, audit))) throw notFound("Webhook endpoint");
}

/**
 * Gives the endpoint a new signing secret (returned, shown once); the current one keeps signing beside it for
 * `gracePeriodSeconds` (0: dropped at once), so a receiver can move to the new one without missing a delivery.
 */
export async function rollWebhookSecret(
  db: Db,
  env: Env,
  existing: WebhookEndpointRow,
  gracePeriodSeconds: number,
  now: Date,
  by: WebhookChangeBy,
  record?: (row: WebhookEndpointRow, secret: string) => ResponseRecorder | undefined,
): Promise<{ row: WebhookEndpointRow; secret: string }> {
  const ring = keyRing(env);
  const secret = newWebhookSecret();
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
  const row = { ...existing, ...set } as WebhookEndpointRow;
  const grace = gracePeriodSeconds > 0 ? `the old secret valid ${gracePeriodSeconds} s more` : "the old secret dropped at once";
  const audit = auditOf(db, existing, now, by, "webhook-secret-rolled", grace);
  if (!(await updateEndpointRow(db, existing.tenantId, existing.id, set, record?.(row, secret), audit))) {
    throw notFound("Webhook endpoint");
  }
  return { row, secret };
}

const emptyDelivery = {
  lastAttemptAt: null,
  nextAttemptAt: null,
  responseStatus: null,
  latencyMs: null,
  responseBody: null,
  error: null,
};

/** Queues a `test` event to the endpoint; returns its delivery as stored. */
export async function sendTestEvent(
  db: Db,
  env: Env,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  endpoint: WebhookEndpointRow,
  now: Date,
  from: WebhookActor,
  record?: (row: WebhookDeliveryRow) => ResponseRecorder | undefined,
): Promise<WebhookDeliveryRow> {
  const id = `msg_test_${randomHex(12)}`;
  const row: NewWebhookDelivery = {
    id,
    tenantId: endpoint.tenantId,
    endpointId: endpoint.id,
    eventType: "test",
    transactionId: null,
    payload: eventBody("test", now, { endpointId: endpoint.id, message: `A test event sent from the ${from}` }),
    status: "pending",
    attempts: 0,
    createdAt: now,
  };
  const stored = { ...emptyDelivery, ...row } as WebhookDeliveryRow;
  await insertWebhookDelivery(db, row, record?.(stored));
  queueOutbox(env, ctx).deliveries([id]);
  return stored;
}

/** Sends the endpoint's delivery again now (same id and body); the endpoint must be enabled. */
export async function retryWebhookDelivery(
  db: Db,
  env: Env,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  endpoint: WebhookEndpointRow,
  deliveryId: string,
  now: Date,
  record?: (row: WebhookDeliveryRow, attempts: WebhookAttemptRow[]) => ResponseRecorder | undefined,
): Promise<{ row: WebhookDeliveryRow; attempts: WebhookAttemptRow[] }> {
  const delivery = await findWebhookDelivery(db, deliveryId);
  if (!delivery || delivery.endpointId !== endpoint.id) throw notFound("Webhook delivery");
  if (!endpoint.enabled) {
    throw new ApiError("CONFLICT", "The endpoint is disabled: enable it before retrying");
  }
  const attempts = await findWebhookAttempts(db, deliveryId);
  const expected = { ...delivery, status: "pending" as const, nextAttemptAt: now, error: null };
  const updated = await requeueWebhookDelivery(db, deliveryId, now, record?.(expected, attempts));
  if (!updated) throw notFound("Webhook delivery");
  queueOutbox(env, ctx).deliveries([deliveryId]);
  return { row: expected, attempts };
}
