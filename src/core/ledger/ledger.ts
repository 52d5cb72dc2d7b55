// The payment ledger: a payment's life, written once. The table below is the only place its moves are named, and
// it is enforced: each move is one function over one database batch (src/db/ledger.ts) guarded by the move's `from`
// as the table names it, that says whether it happened (a move from any other status is refused and writes nothing),
// and builds the move's analytics event itself. The request path (src/gateway/pipeline/), the Cron sweep
// (src/gateway/sweep.ts) and the demo data all move payments through these functions, never around them.
import type { Db } from "../../db/client.ts";
import type { NewEvent } from "../../db/events.ts";
import {
  closePayment,
  findPaymentStatus,
  insertPaymentStart,
  notePendingPaymentHash,
  type PendingPayment,
  paymentCloseStatements,
  paymentStartStatements,
} from "../../db/ledger.ts";
import {
  claimStatements,
  dropAnswerStatement,
  holdAnswerStatement,
  keepAnswerBeforeSettling,
  keepAnswerStatement,
  type PaidAnswerClaim,
  type StoredAnswer,
} from "../../db/paid-answers.ts";
import type { EventType, Token, TransactionStatus, WebhookEventType } from "../../db/schema.ts";
import { webhookFanOutStatement } from "../../db/webhooks.ts";
import type { NetworkId } from "../money/networks.ts";
import { PAID_ANSWER_KEEP_SECONDS } from "../payments.ts";
import { transactionDeliveryIdPrefix } from "../webhooks/events.ts";
import type { Outbox } from "../webhooks/outbox.ts";
import { outcomeEventIdOf, requestEventIdOf } from "./ids.ts";

export type { PendingPayment } from "../../db/ledger.ts";
export type { PaidAnswerClaim, StoredAnswer } from "../../db/paid-answers.ts";

/**
 * Every move of a payment: from which status (`null`: not recorded yet), to which, and the event it records.
 *
 * - `start`: a verified payment is recorded before anything irreversible happens; its transaction id derives from
 *   the payment, so a payment starts at most once.
 * - `complete`: the money moved (its transaction hash), and only after the upstream answered below 400.
 * - `fail`: the money did not move and can no longer move (an upstream failure, a refused settlement, an expiry).
 * - `leaveUnknown`: the settlement was sent and its answer lost: the payment stays PENDING, with the hash when known,
 *   until the request or the sweep reads its outcome from the chain.
 *
 * A gateway payment's paid answer (`paid_answers`, src/db/paid-answers.ts) moves in the same batches: `start` claims
 * it, `complete` stores it (or, from the sweep, keeps the one stored) and makes it servable, `leaveUnknown` stores it
 * unservable, `fail` deletes it. So an answer is served exactly while its payment is COMPLETED. One write is not a
 * move: `keepAnswerBeforeSettlement` stores the upstream's answer, unservable, on the PENDING claim before anything
 * irreversible is sent, so a request that dies while settling leaves a payment the sweep completes with its answer.
 *
 * Enforced: every move's batch is guarded by its `from` (`guardOf`), so a move from any other status is refused by
 * the ledger itself: its function answers `false` and writes nothing (no status, event, answer or delivery). `start`
 * (`from: null`) is guarded by the transaction's primary key: a payment is recorded once. No other code writes a
 * payment's status (demo data and tests included: they move payments through these functions).
 *
 * `webhook`: the event the move records for the tenant's webhook endpoints, in the move's own batch (one statement:
 * a delivery row per subscribed endpoint, only if the move happened; src/db/webhooks.ts). Its ids derive from the
 * payment, so a move repeated records no second event. The deliveries are then handed to the `outbox` (the queue),
 * never awaited by the move.
 */
export const PAYMENT_MOVES = {
  start: { from: null, to: "PENDING", event: "REQUEST", webhook: null },
  complete: { from: "PENDING", to: "COMPLETED", event: "SUCCESS", webhook: "transaction.completed" },
  fail: { from: "PENDING", to: "FAILED", event: "ERROR", webhook: "transaction.failed" },
  leaveUnknown: { from: "PENDING", to: "PENDING", event: null, webhook: "transaction.pending" },
} as const satisfies Record<
  string,
  { from: TransactionStatus | null; to: TransactionStatus; event: EventType | null; webhook: WebhookEventType | null }
>;

export type PaymentMove = keyof typeof PAYMENT_MOVES;

/** The status a payment must stand at for `move` to happen: the table's `from` (the guard of its batch). */
const guardOf = <M extends Exclude<PaymentMove, "start">>(move: M): (typeof PAYMENT_MOVES)[M]["from"] => PAYMENT_MOVES[move].from;

/** What every move needs to know of a payment: its record's id and what the record is about. */
export interface PaymentRef {
  transactionId: string;
  tenantId: string;
  paywallId: string;
  serviceId: string | null;
  protocol: "x402" | "mpp";
  network: NetworkId;
  /** Integer micro-units of the token (6 decimals). */
  amount: string;
}

export interface PaymentStart extends PaymentRef {
  currency: Token;
  payer: string;
  /** The buyer's HTTP method, kept with the REQUEST event. */
  method: string;
  /** How the request came when not at its payment URL (an MCP tool call), kept with the REQUEST event. */
  via?: { transport: "mcp"; tool: string };
  /** What settles the payment from the chain if its request cannot: kept while it is PENDING. */
  pending: PendingPayment;
  /** When it happened (demo data backdates; the gateway leaves it to now). */
  at?: Date;
  /** The gateway's claim on the payment's answer: the request it pays for, its credential, its retry key. */
  claim?: PaidAnswerClaim;
}

/** How a payment ended, as its outcome event tells it. */
export interface Outcome {
  /** The upstream's status, or the gateway's own answer (504, 502, 402, …); `null` when no request was answered. */
  statusCode: number | null;
  /** Milliseconds the upstream took, when it was called. */
  responseTime: number | null;
  /** Who read the outcome: the request itself, or the sweep from the chain. */
  settledBy?: "request" | "sweep";
  /** For a paywall whose answers are cached: whether this one came from the edge cache (no upstream call) or not. */
  cache?: "hit" | "miss";
  at?: Date;
}

const eventBase = (p: PaymentRef, id: string, eventType: EventType, at: Date): NewEvent => ({
  id,
  tenantId: p.tenantId,
  paywallId: p.paywallId,
  serviceId: p.serviceId,
  eventType,
  createdAt: at,
});

/** What an outcome event adds to its metadata: who settled it (the sweep), and the edge cache's part. */
const outcomeMetadata = (o: Outcome) => ({
  ...(o.settledBy === "sweep" ? { settledBy: "sweep" } : {}),
  ...(o.cache ? { cache: o.cache } : {}),
});

/** The rows of a `start`: the PENDING transaction, its REQUEST event, and what settles it from the chain. */
export function startRows(p: PaymentStart) {
  const at = p.at ?? new Date();
  return [
    {
      id: p.transactionId,
      tenantId: p.tenantId,
      paywallId: p.paywallId,
      serviceId: p.serviceId,
      protocol: p.protocol,
      network: p.network,
      amount: p.amount,
      currency: p.currency,
      status: PAYMENT_MOVES.start.to,
      payerAddress: p.payer,
      createdAt: at,
    },
    {
      ...eventBase(p, requestEventIdOf(p.transactionId), PAYMENT_MOVES.start.event, at),
      amount: p.amount,
      metadata: {
        protocol: p.protocol,
        method: p.method,
        network: p.network,
        ...(p.via ? { transport: p.via.transport, tool: p.via.tool } : {}),
      },
    },
    p.pending,
  ] as const;
}

/** The change and event of a `complete`: COMPLETED with the transfer's hash, and its SUCCESS event. */
export function completeRows(p: PaymentRef, txHash: string, o: Outcome) {
  const at = o.at ?? new Date();
  return [
    { status: PAYMENT_MOVES.complete.to, txHash, settledAt: at, failureReason: null },
    {
      ...eventBase(p, outcomeEventIdOf(p.transactionId), PAYMENT_MOVES.complete.event, at),
      statusCode: o.statusCode,
      responseTime: o.responseTime,
      amount: p.amount,
      metadata: { protocol: p.protocol, network: p.network, ...outcomeMetadata(o) },
    },
  ] as const;
}

/** The change and event of a `fail`: FAILED with the reason, and its ERROR event. */
export function failRows(p: PaymentRef, reason: string, o: Outcome) {
  const at = o.at ?? new Date();
  return [
    { status: PAYMENT_MOVES.fail.to, txHash: null, settledAt: at, failureReason: reason },
    {
      ...eventBase(p, outcomeEventIdOf(p.transactionId), PAYMENT_MOVES.fail.event, at),
      statusCode: o.statusCode,
      responseTime: o.responseTime,
      metadata: { protocol: p.protocol, reason, ...outcomeMetadata(o) },
    },
  ] as const;
}

/**
 * `start`: PENDING with its REQUEST event (and the claim on its answer). `false` when the payment was already recorded
 * (the same payment again), or when its retry key belongs to another payment (nothing is written then).
 */
export const startPayment = (db: Db, p: PaymentStart): Promise<boolean> =>
  insertPaymentStart(
    db,
    ...startRows(p),
    p.claim ? claimStatements(db, p.transactionId, p.tenantId, p.claim, p.at ?? new Date()) : [],
  );

/** Until when a COMPLETED payment's answer stays servable, from when it became so. */
const keptUntil = (at: Date) => new Date(at.getTime() + PAID_ANSWER_KEEP_SECONDS * 1000);

/** The webhook statement of a move (see `PAYMENT_MOVES`). */
function webhookOf(db: Db, p: PaymentRef, move: "complete" | "fail" | "leaveUnknown", at: Date) {
  const type = PAYMENT_MOVES[move].webhook;
  return webhookFanOutStatement(db, {
    transactionId: p.transactionId,
    tenantId: p.tenantId,
    type,
    status: PAYMENT_MOVES[move].to,
    idPrefix: transactionDeliveryIdPrefix(p.transactionId, type),
    at,
  });
}

/** Hands the deliveries a move recorded to the outbox, and says whether the move happened. */
function notify(outbox: Outbox | undefined, { moved, deliveries }: { moved: boolean; deliveries: { id: string }[] }) {
  if (outbox && deliveries.length > 0) outbox.deliveries(deliveries.map((d) => d.id));
  return moved;
}

/**
 * `complete`: COMPLETED with the hash of the transfer, and its SUCCESS event; the request's `answer` stored (from the
 * sweep: the one `leaveUnknown` stored), servable for `PAID_ANSWER_KEEP_SECONDS`; its `transaction.completed` webhook
 * deliveries, handed to `outbox`. `false` if it was no longer PENDING.
 */
export async function completePayment(
  db: Db,
  p: PaymentRef,
  txHash: string,
  o: Outcome,
  answer?: StoredAnswer,
  outbox?: Outbox,
): Promise<boolean> {
  const [change, event] = completeRows(p, txHash, o);
  const keep = keepAnswerStatement(
    db,
    p.transactionId,
    PAYMENT_MOVES.complete.to,
    keptUntil(answer?.at ?? o.at ?? new Date()),
    answer,
  );
  const result = await closePayment(
    db,
    p.transactionId,
    guardOf("complete"),
    change,
    event,
    [keep],
    webhookOf(db, p, "complete", change.settledAt),
  );
  return notify(outbox, result);
}

/**
 * `fail`: FAILED with the reason, and its ERROR event; its answer deleted; its `transaction.failed` webhook
 * deliveries, handed to `outbox`. `false` if it was no longer PENDING.
 */
export async function failPayment(db: Db, p: PaymentRef, reason: string, o: Outcome, outbox?: Outbox): Promise<boolean> {
  const [change, event] = failRows(p, reason, o);
  const drop = dropAnswerStatement(db, p.transactionId, PAYMENT_MOVES.fail.to);
  const result = await closePayment(
    db,
    p.transactionId,
    guardOf("fail"),
    change,
    event,
    [drop],
    webhookOf(db, p, "fail", change.settledAt),
  );
  return notify(outbox, result);
}

/**
 * The statements of these moves, for writing many payments in one batch (demo data): the same rows the moves write,
 * without their "did it happen" answer.
 */
export const moveStatements = {
  start: (db: Db, p: PaymentStart) => paymentStartStatements(db, ...startRows(p)),
  complete: (db: Db, p: PaymentRef, txHash: string, o: Outcome) => {
    const [change, event] = completeRows(p, txHash, o);
    return paymentCloseStatements(
      db,
      p.transactionId,
      guardOf("complete"),
      change,
      event,
      webhookOf(db, p, "complete", change.settledAt),
    );
  },
  fail: (db: Db, p: PaymentRef, reason: string, o: Outcome) => {
    const [change, event] = failRows(p, reason, o);
    return paymentCloseStatements(
      db,
      p.transactionId,
      guardOf("fail"),
      change,
      event,
      webhookOf(db, p, "fail", change.settledAt),
    );
  },
};

/**
 * `leaveUnknown`: still PENDING, its settlement's hash kept when known (the tenant sees it), for the sweep to settle
 * from the chain; the request's `answer` stored, unservable until the payment is COMPLETED; its `transaction.pending`
 * webhook deliveries (once per payment), handed to `outbox`. `false` if it was no longer PENDING.
 */
export async function leavePaymentUnknown(
  db: Db,
  p: PaymentRef,
  txHash: string | undefined,
  answer?: StoredAnswer,
  outbox?: Outbox,
): Promise<boolean> {
  const extras = answer ? [holdAnswerStatement(db, p.transactionId, PAYMENT_MOVES.fail.to, answer)] : [];
  const webhook = webhookOf(db, p, "leaveUnknown", new Date());
  return notify(outbox, await notePendingPaymentHash(db, p.transactionId, guardOf("leaveUnknown"), txHash, extras, webhook));
}

/**
 * Not a move: the upstream's answer kept on the PENDING payment's claim before its settlement is sent (unservable
 * until `complete`; deleted by `fail`). `false` if the payment is no longer PENDING (nothing written).
 */
export async function keepAnswerBeforeSettlement(db: Db, p: PaymentRef, answer: StoredAnswer): Promise<boolean> {
  const kept = await keepAnswerBeforeSettling(db, p.transactionId, guardOf("leaveUnknown"), answer.sealed);
  return kept.length === 1;
}

/** Where a recorded payment stands (a resent payment's answer depends on it), or `undefined` if never recorded. */
export const paymentStatus = findPaymentStatus;
