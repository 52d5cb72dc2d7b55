// Webhook endpoints, the outbox of deliveries and their attempts (see src/core/webhooks/).
import { and, asc, count, desc, eq, exists, inArray, isNull, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { batchRecording, type ResponseRecorder } from "./idempotency.ts";
import { type Audit, changedJustNow, type Page } from "./page.ts";
import {
  type TransactionStatus,
  transactions,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookDeliveryStatus,
  type WebhookEndpointRow,
  type WebhookEventType,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from "./schema.ts";

export type NewWebhookEndpoint = typeof webhookEndpoints.$inferInsert;
export type WebhookEndpointPatch = Partial<
  Pick<
    NewWebhookEndpoint,
    | "url"
    | "description"
    | "events"
    | "enabled"
    | "disabledReason"
    | "consecutiveFailures"
    | "secret"
    | "previousSecret"
    | "previousSecretExpiresAt"
    | "updatedAt"
  >
>;
export type NewWebhookDelivery = typeof webhookDeliveries.$inferInsert;

const newestEndpointsFirst = [desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id)];
const newestDeliveriesFirst = [desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)];
const ofTenant = (id: string, tenantId: string) => and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.tenantId, tenantId));

// ---------------------------------------------------------------------------------------------------------------
// The outbox: written by the ledger's moves

/**
 * The one statement a ledger move adds to its batch: a delivery row for each of the tenant's enabled endpoints that
 * subscribe to `type`, only if the transaction now has `status` (so a move that did not happen, because another one
 * came first, records no event). Ids are `<idPrefix><endpoint id>`, derived from the payment, so a move repeated
 * inserts nothing twice. Returns the new rows' ids.
 */
export function webhookFanOutStatement(
  db: Db,
  event: {
    transactionId: string;
    tenantId: string;
    type: WebhookEventType;
    status: TransactionStatus;
    idPrefix: string;
    at: Date;
  },
) {
  return db
    .insert(webhookDeliveries)
    .select(
      db
        .select({
          id: sql<string>`${event.idPrefix} || ${webhookEndpoints.id}`.as("id"),
          tenantId: webhookEndpoints.tenantId,
          endpointId: webhookEndpoints.id,
          eventType: sql<string>`${event.type}`.as("event_type"),
          transactionId: transactions.id,
          payload: sql<null>`NULL`.as("payload"),
          status: sql<WebhookDeliveryStatus>`'pending'`.as("status"),
          attempts: sql<number>`0`.as("attempts"),
          lastAttemptAt: sql<null>`NULL`.as("last_attempt_at"),
          nextAttemptAt: sql<null>`NULL`.as("next_attempt_at"),
          responseStatus: sql<null>`NULL`.as("response_status"),
          latencyMs: sql<null>`NULL`.as("latency_ms"),
          responseBody: sql<null>`NULL`.as("response_body"),
          error: sql<null>`NULL`.as("error"),
          createdAt: sql<number>`${event.at.getTime()}`.as("created_at"),
        })
        .from(webhookEndpoints)
        .innerJoin(transactions, eq(transactions.id, event.transactionId))
        .where(
          and(
            eq(webhookEndpoints.tenantId, event.tenantId),
            eq(webhookEndpoints.enabled, true),
            eq(transactions.status, event.status),
            sql`EXISTS (SELECT 1 FROM json_each(${webhookEndpoints.events}) WHERE value = ${event.type})`,
          ),
        ) as never,
    )
    .onConflictDoNothing({ target: webhookDeliveries.id })
    .returning({ id: webhookDeliveries.id });
}

// ---------------------------------------------------------------------------------------------------------------
// Endpoints

export async function findWebhookEndpoint(db: Db, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).limit(1);
  return row;
}

/** A page of a tenant's endpoints, newest first, and their total. */
export async function findWebhookEndpointsPage(db: Db, tenantId: string, page: Page) {
  const where = eq(webhookEndpoints.tenantId, tenantId);
  const [[total], rows] = await db.batch([
    db.select({ n: count() }).from(webhookEndpoints).where(where),
    db
      .select()
      .from(webhookEndpoints)
      .where(where)
      .orderBy(...newestEndpointsFirst)
      .limit(page.limit)
      .offset(page.offset),
  ]);
  return { total: total?.n ?? 0, rows };
}

/** Whether an endpoint matching `where` exists (a recorder's `applied`). */
const someEndpoint = (db: Db, where: SQL | undefined) => exists(db.select({ one: sql`1` }).from(webhookEndpoints).where(where));

/** Whether a delivery matching `where` exists (a recorder's `applied`). */
const someDelivery = (db: Db, where: SQL | undefined) => exists(db.select({ one: sql`1` }).from(webhookDeliveries).where(where));

/** Inserts the endpoint unless the tenant already holds `cap` endpoints (one atomic batch, as for services). */
export async function insertWebhookEndpointWithinCap(
  db: Db,
  row: NewWebhookEndpoint,
  cap: number,
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<boolean> {
  const stays = someEndpoint(db, eq(webhookEndpoints.id, row.id));
  const [[inserted], removed] = await batchRecording(
    db,
    [
      db.insert(webhookEndpoints).values(row).returning({ id: webhookEndpoints.id }),
      db
        .delete(webhookEndpoints)
        .where(
          and(
            eq(webhookEndpoints.id, row.id),
            sql`(SELECT count(*) FROM ${webhookEndpoints} WHERE ${webhookEndpoints.tenantId} = ${row.tenantId}) > ${cap}`,
          ),
        )
        .returning({ id: webhookEndpoints.id }),
      ...(audit ? [audit(stays)] : []),
    ],
    { recorder, applied: stays, at: "last" },
  );
  return inserted !== undefined && removed.length === 0;
}

/**
 * Updates the tenant's endpoint; returns the row after the update, or undefined if it is gone. `audit` is written in
 * the same batch, only if the endpoint was there to change.
 */
export async function updateWebhookEndpoint(
  db: Db,
  tenantId: string,
  id: string,
  patch: WebhookEndpointPatch,
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<WebhookEndpointRow | undefined> {
  const where = ofTenant(id, tenantId);
  const present = someEndpoint(db, where);
  const [[row]] = await batchRecording(
    db,
    [db.update(webhookEndpoints).set(patch).where(where).returning(), ...(audit ? [audit(present)] : [])],
    { recorder, applied: present, at: "first" },
  );
  return row;
}

/**
 * Deletes the tenant's endpoint (its deliveries and their attempts go with it); whether it existed. `audit` is
 * written in the same batch, only if this statement deleted it.
 */
export async function deleteWebhookEndpoint(db: Db, tenantId: string, id: string, recorder?: ResponseRecorder, audit?: Audit) {
  const where = ofTenant(id, tenantId);
  const [rows] = await batchRecording(
    db,
    [db.delete(webhookEndpoints).where(where).returning({ id: webhookEndpoints.id }), ...(audit ? [audit(changedJustNow)] : [])],
    { recorder, applied: someEndpoint(db, where), at: "first" },
  );
  return rows.length === 1;
}

// ---------------------------------------------------------------------------------------------------------------
// Deliveries and attempts

/** Inserts one delivery (a test event) with the request's recorded answer, if any. */
export async function insertWebhookDelivery(db: Db, row: NewWebhookDelivery, recorder?: ResponseRecorder): Promise<void> {
  await batchRecording(db, [db.insert(webhookDeliveries).values(row)], {
    recorder,
    applied: someDelivery(db, eq(webhookDeliveries.id, row.id)),
    at: "last",
  });
}

export async function findWebhookDelivery(db: Db, id: string): Promise<WebhookDeliveryRow | undefined> {
  const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).limit(1);
  return row;
}

export interface DeliveryFilter {
  status?: WebhookDeliveryStatus | undefined;
}

/** A page of an endpoint's deliveries, newest first, each with its attempts (oldest first), and the total. */
export async function findWebhookDeliveriesPage(db: Db, endpointId: string, page: Page, filter: DeliveryFilter = {}) {
  const where = and(
    eq(webhookDeliveries.endpointId, endpointId),
    filter.status ? eq(webhookDeliveries.status, filter.status) : undefined,
  );
  const pageIds = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(where)
    .orderBy(...newestDeliveriesFirst)
    .limit(page.limit)
    .offset(page.offset);
  const [[total], rows, attempts] = await db.batch([
    db.select({ n: count() }).from(webhookDeliveries).where(where),
    db
      .select()
      .from(webhookDeliveries)
      .where(where)
      .orderBy(...newestDeliveriesFirst)
      .limit(page.limit)
      .offset(page.offset),
    db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, pageIds)).orderBy(asc(webhookAttempts.attempt)),
  ]);
  const byDelivery = Map.groupBy(attempts, (a) => a.deliveryId);
  return { total: total?.n ?? 0, rows: rows.map((row) => ({ row, attempts: byDelivery.get(row.id) ?? [] })) };
}

export async function findWebhookAttempts(db: Db, deliveryId: string): Promise<WebhookAttemptRow[]> {
  return db
    .select()
    .from(webhookAttempts)
    .where(eq(webhookAttempts.deliveryId, deliveryId))
    .orderBy(asc(webhookAttempts.attempt));
}

/** A delivery made due again at once (a tenant's retry): pending, next attempt now. Returns the row after it. */
export async function requeueWebhookDelivery(db: Db, id: string, now: Date, recorder?: ResponseRecorder) {
  const where = eq(webhookDeliveries.id, id);
  const [[row]] = await batchRecording(
    db,
    [db.update(webhookDeliveries).set({ status: "pending", nextAttemptAt: now, error: null }).where(where).returning()],
    { recorder, applied: someDelivery(db, where), at: "first" },
  );
  return row;
}

/** A delivery with what sending it needs: its endpoint (null once deleted). */
export async function findDeliveryToSend(db: Db, id: string) {
  const [row] = await db
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(eq(webhookDeliveries.id, id))
    .limit(1);
  return row;
}

export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  ok: boolean;
  at: Date;
  payload: string;
  responseStatus: number | null;
  latencyMs: number | null;
  responseBody: string | null;
  error: string | null;
  /** When the next attempt is due; null when there is none (delivered, or given up). */
  nextAttemptAt: Date | null;
  /** The delivery's status after this attempt. */
  status: WebhookDeliveryStatus;
  /** A failure this many in a row (counting this one) disables the endpoint. */
  disableAfter: number;
}

/**
 * One attempt, atomically: its row (numbered after the delivery's last), the delivery's summary, and the endpoint's
 * run of failures (reset by a success; a failure that makes the run `disableAfter` long disables the endpoint).
 * Returns the delivery's attempt count and whether the endpoint is now disabled.
 */
export async function recordWebhookAttempt(db: Db, a: AttemptRecord): Promise<{ attempts: number; disabled: boolean }> {
  const attemptNo = sql<number>`(SELECT ${webhookDeliveries.attempts} + 1 FROM ${webhookDeliveries} WHERE ${webhookDeliveries.id} = ${a.deliveryId})`;
  const failures = sql`${webhookEndpoints.consecutiveFailures} + 1`;
  const [, [delivery], [endpoint]] = await db.batch([
    db.insert(webhookAttempts).values({
      deliveryId: a.deliveryId,
      attempt: attemptNo,
      ok: a.ok,
      responseStatus: a.responseStatus,
      latencyMs: a.latencyMs,
      responseBody: a.responseBody,
      error: a.error,
      createdAt: a.at,
    }),
    db
      .update(webhookDeliveries)
      .set({
        payload: sql`coalesce(${webhookDeliveries.payload}, ${a.payload})`,
        status: a.status,
        attempts: sql`${webhookDeliveries.attempts} + 1`,
        lastAttemptAt: a.at,
        nextAttemptAt: a.nextAttemptAt,
        responseStatus: a.responseStatus,
        latencyMs: a.latencyMs,
        responseBody: a.responseBody,
        error: a.error,
      })
      .where(eq(webhookDeliveries.id, a.deliveryId))
      .returning({ attempts: webhookDeliveries.attempts }),
    a.ok
      ? db
          .update(webhookEndpoints)
          .set({ consecutiveFailures: 0 })
          .where(eq(webhookEndpoints.id, a.endpointId))
          .returning({ enabled: webhookEndpoints.enabled })
      : db
          .update(webhookEndpoints)
          .set({
            consecutiveFailures: failures,
            enabled: sql`CASE WHEN ${failures} >= ${a.disableAfter} THEN 0 ELSE ${webhookEndpoints.enabled} END`,
            disabledReason: sql`CASE WHEN ${failures} >= ${a.disableAfter} AND ${webhookEndpoints.enabled} = 1 THEN ${`${a.disableAfter} consecutive failed attempts`} ELSE ${webhookEndpoints.disabledReason} END`,
          })
          .where(eq(webhookEndpoints.id, a.endpointId))
          .returning({ enabled: webhookEndpoints.enabled }),
  ]);
  return { attempts: delivery?.attempts ?? 0, disabled: endpoint ? !endpoint.enabled : true };
}

/** A delivery that will not be attempted (endpoint disabled, dead-lettered): failed with the reason, if still pending. */
export async function giveUpWebhookDelivery(db: Db, id: string, reason: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, error: reason })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, "pending")));
}

/**
 * Pending deliveries whose attempt is overdue by more than the margin (never sent to the queue, or their message
 * was lost): due before `dueBefore`. Each is marked due now, so a run does not take it again before the margin
 * passes once more.
 */
export async function takeOverdueWebhookDeliveries(db: Db, dueBefore: Date, now: Date, limit: number): Promise<string[]> {
  const due = sql`coalesce(${webhookDeliveries.nextAttemptAt}, ${webhookDeliveries.createdAt})`;
  const rows = await db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now })
    .where(
      inArray(
        webhookDeliveries.id,
        db
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(
            and(
              eq(webhookDeliveries.status, "pending"),
              or(
                lt(webhookDeliveries.nextAttemptAt, dueBefore),
                and(isNull(webhookDeliveries.nextAttemptAt), lt(webhookDeliveries.createdAt, dueBefore)),
              ),
            ),
          )
          .orderBy(asc(due))
          .limit(limit),
      ),
    )
    .returning({ id: webhookDeliveries.id });
  return rows.map((r) => r.id);
}
