// The payment ledger's writes and reads: each move of a payment is one of these statements or batches, guarded by
// the status it moves from, which the caller passes from the move table (src/core/ledger/ledger.ts owns the moves and
// their guards; nothing else writes a transaction's status). Every row a move adds besides the transaction's is
// written only if the transaction stands where the move leaves it, so a refused move writes nothing.
import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client.ts";
import { isUniqueViolation } from "./errors.ts";
import type { NewEvent } from "./events.ts";
import {
  type DiscoveryListingRow,
  events,
  type NewChannel,
  paidAnswers,
  pendingPayments,
  type TransactionRow,
  type TransactionStatus,
  transactions,
  type WebhookEventType,
} from "./schema.ts";
import type { NewTransaction } from "./transactions.ts";
import type { webhookFanOutStatement } from "./webhooks.ts";

/** The transaction `id` stands at `status` (when the statement runs: later in a batch, after the move's update). */
const standsAt = (id: string, status: TransactionStatus) => and(eq(transactions.id, id), eq(transactions.status, status));

/** A bound value as a selected column: what an `INSERT … SELECT` writes. */
const value = (v: unknown, name: string) => sql`${v ?? null}`.as(name);

/**
 * A move's event, written only if its transaction stands at `status` once the move's update ran (a move refused, or
 * of a payment never recorded, writes none), and at most once (its id derives from the payment).
 */
function eventIfAt(db: Db, transactionId: string, event: NewEvent, status: TransactionStatus) {
  const row = db
    .select({
      id: value(event.id, "id"),
      tenantId: value(event.tenantId, "tenant_id"),
      paywallId: value(event.paywallId, "paywall_id"),
      serviceId: value(event.serviceId, "service_id"),
      eventType: value(event.eventType, "event_type"),
      statusCode: value(event.statusCode, "status_code"),
      responseTime: value(event.responseTime, "response_time"),
      amount: value(event.amount, "amount"),
      metadata: value(event.metadata == null ? null : JSON.stringify(event.metadata), "metadata"),
      createdAt: value((event.createdAt ?? new Date()).getTime(), "created_at"),
    })
    .from(transactions)
    .where(standsAt(transactionId, status));
  return db.insert(events).select(row).onConflictDoNothing({ target: events.id });
}

export type PendingPayment = Pick<
  typeof pendingPayments.$inferInsert,
  "reference" | "validBefore" | "asset" | "payTo" | "settlement"
>;

/** Statements a move adds to its own batch (the paid answer's claim, store or delete: src/db/paid-answers.ts). */
export type MoveExtras = readonly BatchItem<"sqlite">[];

/**
 * A payment's start in one atomic batch: its PENDING transaction, its REQUEST event, what settles it from the chain
 * later (`pending_payments`), and `extras` (its paid answer's claim). All ids derive from the payment, so a replay
 * inserts none. Returns whether this call created the transaction: of two concurrent starts of one payment exactly
 * one gets `true`, and a fault between the writes leaves none. A unique index refusing one of `extras` (the claim of
 * a retry key another payment holds) refuses the whole start: `false`, nothing written.
 */
export async function insertPaymentStart(
  db: Db,
  transaction: NewTransaction,
  event: NewEvent,
  pending: PendingPayment,
  extras: MoveExtras = [],
): Promise<boolean> {
  try {
    const [inserted] = await db.batch([...paymentStartStatements(db, transaction, event, pending), ...extras]);
    return inserted.length === 1;
  } catch (err) {
    if (extras.length > 0 && isUniqueViolation(err)) return false;
    throw err;
  }
}

/**
 * The statements of a payment's start (see `insertPaymentStart`), for a batch of one payment or of many. The move's
 * guard (`from: null`, not recorded yet) is the transaction's primary key; what settles it from the chain is written
 * only while it stands PENDING (`to`), so the start of a payment already closed writes nothing either.
 */
export function paymentStartStatements(db: Db, transaction: NewTransaction, event: NewEvent, pending: PendingPayment) {
  const pendingRow = db
    .select({
      transactionId: value(transaction.id, "transaction_id"),
      tenantId: value(transaction.tenantId, "tenant_id"),
      reference: value(pending.reference, "reference"),
      validBefore: value(pending.validBefore.getTime(), "valid_before"),
      asset: value(pending.asset, "asset"),
      payTo: value(pending.payTo, "pay_to"),
      settlement: value(pending.settlement, "settlement"),
      checkedAt: value(null, "checked_at"),
      attempts: value(0, "attempts"),
      createdAt: value(Date.now(), "created_at"),
    })
    .from(transactions)
    .where(standsAt(transaction.id, transaction.status));
  return [
    db
      .insert(transactions)
      .values(transaction)
      .onConflictDoNothing({ target: transactions.id })
      .returning({ id: transactions.id }),
    db.insert(events).values(event).onConflictDoNothing({ target: events.id }),
    db.insert(pendingPayments).select(pendingRow).onConflictDoNothing({ target: pendingPayments.transactionId }),
  ] as const;
}

/**
 * A payment's outcome in one atomic batch: `from` → `change.status` (COMPLETED or FAILED), its SUCCESS or ERROR event
 * (one per payment: the event id derives from it), its `pending_payments` row gone, and `extras` (its paid answer kept
 * or deleted, each guarded by the status this batch leaves) and `webhook` (the move's webhook deliveries). Returns
 * whether the transaction stood at `from` (the move happened), and the deliveries written. Refused (the transaction
 * stood elsewhere, or was never recorded): nothing is written.
 */
export async function closePayment(
  db: Db,
  id: string,
  from: TransactionStatus,
  change: PaymentClose,
  event: NewEvent,
  extras: MoveExtras = [],
  webhook?: WebhookStatement,
): Promise<MoveResult> {
  const results = await db.batch([...paymentCloseStatements(db, id, from, change, event, webhook), ...extras]);
  return { moved: results[0].length === 1, deliveries: webhook ? (results[3] as { id: string }[]) : [] };
}

/** The webhook statement a move adds to its batch (`webhookFanOutStatement`): it returns the deliveries it wrote. */
export type WebhookStatement = ReturnType<typeof webhookFanOutStatement>;

/** Whether a move happened, and the webhook deliveries its batch wrote. */
export interface MoveResult {
  moved: boolean;
  deliveries: { id: string }[];
}

export type PaymentClose = Pick<TransactionRow, "status" | "txHash" | "settledAt" | "failureReason">;

/**
 * The statements of a payment's outcome (see `closePayment`), for a batch of one payment or of many; the move's
 * webhook deliveries fourth (`webhookFanOutStatement`: only if the move happened). The pending row goes once the
 * transaction is closed (a refused move leaves a PENDING payment's row).
 */
export function paymentCloseStatements(
  db: Db,
  id: string,
  from: TransactionStatus,
  change: PaymentClose,
  event: NewEvent,
  webhook?: WebhookStatement,
) {
  return [
    db.update(transactions).set(change).where(standsAt(id, from)).returning({ id: transactions.id }),
    eventIfAt(db, id, event, change.status),
    db
      .delete(pendingPayments)
      .where(
        and(
          eq(pendingPayments.transactionId, id),
          sql`exists (select 1 from ${transactions} where ${standsAt(id, change.status)})`,
        ),
      ),
    ...(webhook ? [webhook] : []),
  ] as const;
}

/**
 * A transaction standing at `from` (PENDING) whose settlement outcome is unknown (sent, not seen on chain yet): its
 * hash, when known, is kept on the transaction so the tenant sees it, in one batch with `extras` (its paid answer
 * held) and `webhook` (its `transaction.pending` deliveries). Returns whether the transaction stood at `from`, and the
 * deliveries.
 */
export async function notePendingPaymentHash(
  db: Db,
  id: string,
  from: TransactionStatus,
  txHash: string | undefined,
  extras: MoveExtras = [],
  webhook?: WebhookStatement,
): Promise<MoveResult> {
  const statement =
    txHash === undefined
      ? db.select({ id: transactions.id }).from(transactions).where(standsAt(id, from))
      : db.update(transactions).set({ txHash }).where(standsAt(id, from)).returning({ id: transactions.id });
  const results = await db.batch([statement, ...(webhook ? [webhook] : []), ...extras]);
  return { moved: results[0].length === 1, deliveries: webhook ? (results[1] as { id: string }[]) : [] };
}

/** A transaction's status and hash (a replayed payment's answer depends on them). */
export async function findPaymentStatus(db: Db, id: string) {
  const [row] = await db
    .select({ status: transactions.status, txHash: transactions.txHash })
    .from(transactions)
    .where(eq(transactions.id, id));
  return row;
}

/**
 * PENDING gateway payments started before `startedBefore`, least recently checked first (never checked: by when
 * they started), each with where its request left it: `answerKept` (the upstream's answer is kept for it) and
 * `requestFinished` (its request recorded an outcome, e.g. the settlement's unknown one). A payment outlives its
 * paywall: the transaction keeps the paywall's ids.
 */
export async function findPendingPayments(db: Db, startedBefore: Date, limit: number) {
  return db
    .select({
      pending: pendingPayments,
      transaction: transactions,
      answerKept: sql<number>`${paidAnswers.answer} is not null`.mapWith(Boolean),
      requestFinished: sql<number>`${paidAnswers.answeredAt} is not null`.mapWith(Boolean),
    })
    .from(pendingPayments)
    .innerJoin(transactions, eq(transactions.id, pendingPayments.transactionId))
    .leftJoin(paidAnswers, eq(paidAnswers.transactionId, pendingPayments.transactionId))
    .where(and(eq(transactions.status, "PENDING"), lt(pendingPayments.createdAt, startedBefore)))
    .orderBy(asc(sql`coalesce(${pendingPayments.checkedAt}, ${pendingPayments.createdAt})`), asc(pendingPayments.createdAt))
    .limit(limit);
}

/** The sweep asked the chain about these payments and they stay PENDING: to the back of its queue. */
export async function notePaymentsChecked(db: Db, transactionIds: string[], now: Date): Promise<void> {
  // D1 binds at most 100 parameters per statement.
  for (let i = 0; i < transactionIds.length; i += 90) {
    await db
      .update(pendingPayments)
      .set({ checkedAt: now, attempts: sql`${pendingPayments.attempts} + 1` })
      .where(inArray(pendingPayments.transactionId, transactionIds.slice(i, i + 90)));
  }
}

/** A transaction record's columns, as `json_each` rows carry them (dates as epoch milliseconds). */
const TRANSACTION_COLUMNS = {
  id: "id",
  tenantId: "tenant_id",
  paywallId: "paywall_id",
  serviceId: "service_id",
  protocol: "protocol",
  network: "network",
  amount: "amount",
  currency: "currency",
  status: "status",
  payerAddress: "payer_address",
  txHash: "tx_hash",
  failureReason: "failure_reason",
  createdAt: "created_at",
  settledAt: "settled_at",
} as const;

const EVENT_COLUMNS = {
  id: "id",
  tenantId: "tenant_id",
  paywallId: "paywall_id",
  serviceId: "service_id",
  eventType: "event_type",
  statusCode: "status_code",
  responseTime: "response_time",
  amount: "amount",
  metadata: "metadata",
  createdAt: "created_at",
} as const;

/** A row as JSON for `json_each`: the columns' keys, dates as milliseconds, JSON columns as their text. */
function jsonRow(row: object, columns: Record<string, string>, jsonKeys: readonly string[] = []) {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(columns)) {
    const v = (row as Record<string, unknown>)[key];
    out[key] = v instanceof Date ? v.getTime() : jsonKeys.includes(key) && v != null ? JSON.stringify(v) : (v ?? null);
  }
  return out;
}

/**
 * `INSERT INTO <table> (…) SELECT …` of every row of the JSON array parameter `?1` (`json_each`, in array order), for a
 * tenant that still exists: D1 binds at most 100 parameters per statement, so a whole batch's rows travel as one.
 */
function insertFromJson(table: string, columns: Record<string, string>, andWhere = "") {
  const values = Object.keys(columns).map((k) => `json_extract(value, '$.${k}')`);
  return `INSERT INTO ${table} (${Object.values(columns).join(", ")}) SELECT ${values.join(", ")} FROM json_each(?1)
    WHERE EXISTS (SELECT 1 FROM tenants WHERE tenants.id = json_extract(value, '$.tenantId')) ${andWhere} ORDER BY key`;
}

const LISTING_COLUMNS = {
  paywallId: "paywall_id",
  tenantId: "tenant_id",
  status: "status",
  reason: "reason",
  facilitatorUrl: "facilitator_url",
  updatedAt: "updated_at",
} as const;

/**
 * The read model of payments recorded in their Durable Objects (src/core/ledger/payment-object.ts): each record is a
 * transaction as its object last moved it (with the webhook event of that move), or an event. However many records
 * (of however many payments), one D1 batch of at most four statements writes them: the transactions, the events,
 * the webhook deliveries, the discovery listings, each statement's rows one JSON parameter (sent as written: drizzle's batch does not bind a
 * raw statement's parameters). Idempotent by the records' own ids: an event or a delivery already stored is left as
 * it is, and a stored transaction takes a record's status only along one of `moves` (`[from, to]` pairs, the ledger's
 * move table; records apply in their order), so a batch applied twice, or an older one applied after a newer one,
 * records nothing twice and never moves a payment back. A move's deliveries are written when its transaction stands
 * at the move's status or has moved on from it. The daily roll-ups follow from the rows (triggers,
 * migrations/0005), as on the D1 path. Records of a tenant deleted meanwhile are dropped. Returns the deliveries
 * written.
 */
export async function applyPaymentRecords(
  db: Db,
  records: readonly PaymentRecord[],
  moves: readonly (readonly [TransactionStatus, TransactionStatus])[],
): Promise<string[]> {
  const along = `(VALUES ${moves.map(([from, to]) => `('${from}', '${to}')`).join(", ")})`;
  const moved = records.flatMap((r) => (r.kind === "transaction" ? [jsonRow(r.row, TRANSACTION_COLUMNS)] : []));
  const happened = records.flatMap((r) => (r.kind === "event" ? [jsonRow(r.row, EVENT_COLUMNS, ["metadata"])] : []));
  const webhooks = records.flatMap((r) =>
    r.kind === "transaction" && r.webhook
      ? [{ ...r.webhook, at: r.webhook.at.getTime(), transactionId: r.row.id, status: r.row.status }]
      : [],
  );
  const listings = records.flatMap((r) => (r.kind === "listing" ? [jsonRow(r.row, LISTING_COLUMNS)] : []));
  const d1 = db.$client;
  const statements: D1PreparedStatement[] = [];
  if (moved.length > 0) {
    const upsert = `${insertFromJson("transactions", TRANSACTION_COLUMNS)}
      ON CONFLICT (id) DO UPDATE SET status = excluded.status, tx_hash = coalesce(excluded.tx_hash, transactions.tx_hash),
        failure_reason = excluded.failure_reason, settled_at = excluded.settled_at
      WHERE (transactions.status, excluded.status) IN ${along}`;
    statements.push(d1.prepare(upsert).bind(JSON.stringify(moved)));
  }
  if (happened.length > 0) {
    const insert = `${insertFromJson("events", EVENT_COLUMNS)} ON CONFLICT (id) DO NOTHING`;
    statements.push(d1.prepare(insert).bind(JSON.stringify(happened)));
  }
  if (webhooks.length > 0) {
    const fanOut = `INSERT INTO webhook_deliveries
        (id, tenant_id, endpoint_id, event_type, transaction_id, status, attempts, created_at)
      SELECT json_extract(r.value, '$.idPrefix') || e.id, e.tenant_id, e.id, json_extract(r.value, '$.type'), t.id,
        'pending', 0, json_extract(r.value, '$.at')
      FROM json_each(?1) AS r
      JOIN transactions AS t ON t.id = json_extract(r.value, '$.transactionId')
      JOIN webhook_endpoints AS e ON e.tenant_id = t.tenant_id AND e.enabled = 1
      WHERE (t.status = json_extract(r.value, '$.status') OR (json_extract(r.value, '$.status'), t.status) IN ${along})
        AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE value = json_extract(r.value, '$.type'))
      ON CONFLICT (id) DO NOTHING RETURNING id`;
    statements.push(d1.prepare(fanOut).bind(JSON.stringify(webhooks)));
  }
  if (listings.length > 0) {
    const paywallExists = "AND EXISTS (SELECT 1 FROM paywalls WHERE paywalls.id = json_extract(value, '$.paywallId'))";
    const upsert = `${insertFromJson("discovery_listings", LISTING_COLUMNS, paywallExists)}
      ON CONFLICT (paywall_id) DO UPDATE SET status = excluded.status, reason = excluded.reason,
        facilitator_url = excluded.facilitator_url, updated_at = excluded.updated_at
      WHERE excluded.updated_at >= discovery_listings.updated_at`;
    statements.push(d1.prepare(upsert).bind(JSON.stringify(listings)));
  }
  if (statements.length === 0) return [];
  const results = await d1.batch<{ id: string }>(statements);
  return webhooks.length > 0 ? results[statements.length - 1 - (listings.length > 0 ? 1 : 0)]!.results.map((d) => d.id) : [];
}

/**
 * One record of a payment for the read model: its transaction as last moved (with the webhook event of that move, its
 * deliveries written along, ids derived from `idPrefix`), one of its events, the discovery listing its settlement
 * reported for its paywall (the latest wins; src/gateway/discovery/listing.ts), or a session's channel as its object
 * last knew it (a later `seq` wins; src/core/sessions/).
 */
export type PaymentRecord =
  | { kind: "transaction"; row: NewTransaction; webhook?: { type: WebhookEventType; idPrefix: string; at: Date } }
  | { kind: "event"; row: NewEvent }
  | { kind: "listing"; row: DiscoveryListingRow }
  | { kind: "channel"; row: NewChannel };
