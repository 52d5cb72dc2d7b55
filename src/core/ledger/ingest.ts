import { inArray } from "drizzle-orm";
import type { z } from "zod";
import { type Event, type Transaction, toEvent, toTransaction } from "../../api/routes/history-records.ts";
import type { Db } from "../../db/client.ts";
import { findEventsByIds, insertEvents } from "../../db/events.ts";
import { insertPaymentStart, type PendingPayment, settlePaymentWithEvent } from "../../db/gateway.ts";
import { type EventRow, type PaywallRow, paywalls, type TransactionRow } from "../../db/schema.ts";
import { findTransaction, findTransactionsByIds, insertTransactions, settlePending } from "../../db/transactions.ts";
import { issuesOf } from "../../lib/issues.ts";
import type { ErrorCode } from "../http/errors.ts";
import { EventInputSchema, SettlementSchema, TransactionInputSchema } from "./schemas.ts";

/** What every ingestion call returns: RPC callers get a typed result, not a thrown error. */
export type IngestResult<T> = { ok: true; data: T } | { ok: false; code: ErrorCode; error: string; details?: unknown };

export interface Recorded<T> {
  record: T;
  /** False when the id was already stored (an idempotent retry, or a concurrent call that inserted it first). */
  created: boolean;
}

const fail = (code: ErrorCode, error: string, details?: unknown): IngestResult<never> => ({
  ok: false,
  code,
  error,
  ...(details === undefined ? {} : { details }),
});

/** Largest number of records one call may write (each is one statement of one atomic batch). */
export const MAX_BATCH = 100;

function parseAll<S extends z.ZodType>(
  schema: S,
  inputs: unknown[],
): { ok: true; values: z.output<S>[] } | { ok: false; result: IngestResult<never> } {
  if (inputs.length === 0 || inputs.length > MAX_BATCH) {
    return { ok: false, result: fail("VALIDATION_ERROR", `Send 1 to ${MAX_BATCH} records per call`) };
  }
  const values: z.output<S>[] = [];
  for (const [i, input] of inputs.entries()) {
    const parsed = schema.safeParse(input);
    if (!parsed.success) {
      const details = issuesOf(parsed.error).map((d) => ({ ...d, path: inputs.length > 1 ? `${i}.${d.path}` : d.path }));
      return { ok: false, result: fail("VALIDATION_ERROR", "The record is not valid", details) };
    }
    values.push(parsed.data);
  }
  const ids = values.map((v) => (v as { id: string }).id);
  if (new Set(ids).size !== ids.length)
    return { ok: false, result: fail("VALIDATION_ERROR", "Record ids repeat within the call") };
  return { ok: true, values };
}

/** The paywalls named by the records, by id; tenant and service always come from here, never from the caller. */
async function paywallsById(db: Db, ids: string[]): Promise<Map<string, PaywallRow>> {
  const unique = [...new Set(ids)];
  const rows = unique.length ? await db.select().from(paywalls).where(inArray(paywalls.id, unique)) : [];
  return new Map(rows.map((p) => [p.id, p]));
}

function missingPaywall(ids: string[], found: Map<string, PaywallRow>): IngestResult<never> | undefined {
  const missing = [...new Set(ids.filter((id) => !found.has(id)))];
  return missing.length ? fail("NOT_FOUND", "Unknown paywall", { paywallIds: missing }) : undefined;
}

/** Ids already stored for a different paywall: reusing an id for another record is refused, not silently merged. */
function reusedIds(existing: { id: string; paywallId: string }[], inputs: { id: string; paywallId: string }[]) {
  const byId = new Map(existing.map((e) => [e.id, e.paywallId]));
  return inputs.filter((i) => byId.has(i.id) && byId.get(i.id) !== i.paywallId).map((i) => i.id);
}

const summary = (p: PaywallRow) => ({ paywallSlug: p.slug, paywallName: p.name });

/** How one kind of record is validated, stored and shown; the steps around it are the same for every kind. */
interface RecordKind<S extends z.ZodType, Row extends { id: string; paywallId: string }, Out> {
  schema: S;
  /** A problem beyond the schema, given the record's paywall; `undefined` if none. */
  check?: (input: z.output<S>, paywall: PaywallRow) => string | undefined;
  toRow: (input: z.output<S>, paywall: PaywallRow, now: Date) => Row;
  findByIds: (db: Db, ids: string[]) => Promise<Row[]>;
  /** Returns the ids it inserted (not those already stored). */
  insert: (db: Db, rows: Row[]) => Promise<string[]>;
  present: (row: Row & { paywallSlug: string; paywallName: string }) => Out;
}

/**
 * Validates every record, derives tenant and service from its paywall, refuses ids already used for other
 * records, then writes all of them in one batch (ids already stored are kept: an idempotent retry).
 */
async function record<S extends z.ZodType, Row extends { id: string; paywallId: string }, Out>(
  db: Db,
  kind: RecordKind<S, Row, Out>,
  inputs: unknown[],
): Promise<IngestResult<Recorded<Out>[]>> {
  const parsed = parseAll(kind.schema, inputs);
  if (!parsed.ok) return parsed.result;
  const values = parsed.values as (z.output<S> & { id: string; paywallId: string })[];
  const paywallIds = values.map((v) => v.paywallId);
  const found = await paywallsById(db, paywallIds);
  const missing = missingPaywall(paywallIds, found);
  if (missing) return missing;
  for (const v of values) {
    const problem = kind.check?.(v, found.get(v.paywallId) as PaywallRow);
    if (problem) return fail("VALIDATION_ERROR", problem, { ids: [v.id] });
  }
  const ids = values.map((v) => v.id);
  const existing = await kind.findByIds(db, ids);
  const reused = reusedIds(existing, values);
  if (reused.length) return fail("CONFLICT", "These ids are already used by other records", { ids: reused });

  const now = new Date();
  const inserted = new Set(
    await kind.insert(
      db,
      values.map((v) => kind.toRow(v, found.get(v.paywallId) as PaywallRow, now)),
    ),
  );
  const stored = new Map((await kind.findByIds(db, ids)).map((r) => [r.id, r]));
  return {
    ok: true,
    data: ids.map((id) => {
      const row = stored.get(id) as Row;
      return { record: kind.present({ ...row, ...summary(found.get(row.paywallId) as PaywallRow) }), created: inserted.has(id) };
    }),
  };
}

const transactionKind: RecordKind<typeof TransactionInputSchema, TransactionRow, Transaction> = {
  schema: TransactionInputSchema,
  check: (t, paywall) => (paywall.networks.includes(t.network) ? undefined : "network is not one the paywall accepts"),
  toRow: (t, paywall, now) => ({
    id: t.id,
    tenantId: paywall.tenantId,
    paywallId: paywall.id,
    serviceId: paywall.serviceId,
    protocol: t.protocol,
    network: t.network,
    amount: t.amount,
    currency: t.currency,
    status: t.status,
    payerAddress: t.payerAddress ?? null,
    txHash: t.txHash ?? null,
    failureReason: t.failureReason ?? null,
    createdAt: t.createdAt ?? now,
    settledAt: t.status === "PENDING" ? null : (t.settledAt ?? now),
  }),
  findByIds: findTransactionsByIds,
  insert: insertTransactions,
  present: toTransaction,
};

const eventKind: RecordKind<typeof EventInputSchema, EventRow, Event> = {
  schema: EventInputSchema,
  toRow: (e, paywall, now) => ({
    id: e.id,
    tenantId: paywall.tenantId,
    paywallId: paywall.id,
    serviceId: paywall.serviceId,
    eventType: e.eventType,
    statusCode: e.statusCode ?? null,
    responseTime: e.responseTime ?? null,
    amount: e.amount ?? null,
    metadata: e.metadata ?? null,
    createdAt: e.createdAt ?? now,
  }),
  findByIds: findEventsByIds,
  insert: insertEvents,
  present: toEvent,
};

export const recordTransactions = (db: Db, inputs: unknown[]) => record(db, transactionKind, inputs);
export const recordEvents = (db: Db, inputs: unknown[]) => record(db, eventKind, inputs);

/**
 * Settles a PENDING transaction: PENDING → COMPLETED or PENDING → FAILED, nothing else.
 * Repeating the same settlement is accepted (a retry); a different one is refused.
 */
export async function settleTransaction(db: Db, id: unknown, input: unknown): Promise<IngestResult<Transaction>> {
  if (typeof id !== "string" || id.length === 0 || id.length > 64) return fail("VALIDATION_ERROR", "id must be a transaction id");
  const parsed = SettlementSchema.safeParse(input);
  if (!parsed.success) return fail("VALIDATION_ERROR", "The settlement is not valid", issuesOf(parsed.error));
  const s = parsed.data;
  const change = {
    status: s.status,
    txHash: s.txHash ?? null,
    settledAt: s.settledAt ?? new Date(),
    failureReason: s.failureReason ?? null,
  };
  const settled = await settlePending(db, id, change);
  const current = await findTransaction(db, id);
  if (!current) return fail("NOT_FOUND", "Transaction not found");
  if (settled) return { ok: true, data: toTransaction(current) };
  const sameAgain =
    current.status === change.status && current.txHash === change.txHash && current.failureReason === change.failureReason;
  if (sameAgain) return { ok: true, data: toTransaction(current) };
  return fail("CONFLICT", `Transaction is ${current.status}; only a PENDING transaction can be settled`, {
    status: current.status,
  });
}

/** The first problem of a record against its schema, or its parsed value. */
function parseOne<S extends z.ZodType>(
  schema: S,
  input: unknown,
): { ok: true; value: z.output<S> } | { ok: false; result: IngestResult<never> } {
  const parsed = schema.safeParse(input);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, result: fail("VALIDATION_ERROR", "The record is not valid", issuesOf(parsed.error)) };
}

/**
 * The gateway's start of a payment: a PENDING transaction and its REQUEST event, validated like every ingested
 * record, and what settles it from the chain later (`pending`), written in one atomic batch. `created` is false when the transaction id was already stored (the same
 * payment again): then nothing was written. The paywall is the one the gateway resolved from the payment URL.
 */
export async function recordPaymentStart(
  db: Db,
  paywall: PaywallRow,
  transaction: unknown,
  event: unknown,
  pending: PendingPayment,
): Promise<IngestResult<{ created: boolean }>> {
  const t = parseOne(TransactionInputSchema, transaction);
  if (!t.ok) return t.result;
  const e = parseOne(EventInputSchema, event);
  if (!e.ok) return e.result;
  if (t.value.paywallId !== paywall.id || e.value.paywallId !== paywall.id) return fail("VALIDATION_ERROR", "paywallId mismatch");
  const problem = transactionKind.check?.(t.value, paywall);
  if (problem) return fail("VALIDATION_ERROR", problem);
  const now = new Date();
  const created = await insertPaymentStart(
    db,
    transactionKind.toRow(t.value, paywall, now),
    eventKind.toRow(e.value, paywall, now),
    pending,
  );
  return { ok: true, data: { created } };
}

/**
 * The gateway's outcome of a payment: the PENDING transaction settled (COMPLETED with its hash, or FAILED with the
 * reason) and its SUCCESS or ERROR event, in one atomic batch. Refused (CONFLICT) when the transaction was not PENDING.
 */
export async function recordPaymentOutcome(
  db: Db,
  paywall: PaywallRow,
  id: string,
  settlement: unknown,
  event: unknown,
): Promise<IngestResult<void>> {
  const s = parseOne(SettlementSchema, settlement);
  if (!s.ok) return s.result;
  const e = parseOne(EventInputSchema, event);
  if (!e.ok) return e.result;
  if (e.value.paywallId !== paywall.id) return fail("VALIDATION_ERROR", "paywallId mismatch");
  const change = {
    status: s.value.status,
    txHash: s.value.txHash ?? null,
    settledAt: s.value.settledAt ?? new Date(),
    failureReason: s.value.failureReason ?? null,
  };
  const settled = await settlePaymentWithEvent(db, id, change, eventKind.toRow(e.value, paywall, new Date()));
  return settled ? { ok: true, data: undefined } : fail("CONFLICT", "Only a PENDING transaction can be settled");
}
