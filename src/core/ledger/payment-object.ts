// A payment recorded where it is coordinated: the per-payment Durable Object (named by the transaction id) keeps the
// payment's transaction and events in its own SQLite storage, moves it only along the ledger's move table, and hands
// its records, from its alarm, to the payment-records queue, whose consumer writes many payments' records to D1 (the
// read model) in one batch (src/core/ledger/records-queue.ts) and tells the object they landed. The object keeps its
// records until then, sending them again (backing off) while they do not land. A move costs the request one call to
// the object and no D1 statement. The gateway's coordinator extends this
// class, so one object per payment both records it and wakes the copies waiting for it. A payment left PENDING is
// swept by its own object: its alarm, past the payment's expiry, asks the chain (through `chainOutcome`, which the
// gateway's coordinator answers) and makes the ledger's move; no global table is scanned. An x402 payment whose
// upstream's answer is kept and whose request never recorded an outcome is swept sooner, as the Cron sweep would: the
// coordinator settles it while its authorization is valid (src/gateway/sweep.ts `sweptOutcome`).
import { DurableObject } from "cloudflare:workers";
import type { NewEvent } from "../../db/events.ts";
import type { PaymentRecord, PendingPayment } from "../../db/ledger.ts";
import type { KnownPayment } from "../../db/paid-answers.ts";
import type { PaidAnswerRow, TransactionStatus } from "../../db/schema.ts";
import type { NewTransaction } from "../../db/transactions.ts";
import { PAID_ANSWER_KEEP_SECONDS } from "../payments.ts";
import { transactionDeliveryIdPrefix } from "../webhooks/events.ts";
import { completeRows, failRows, type Outcome, PAYMENT_MOVES, type PaymentMove, type PaymentRef } from "./ledger.ts";

/**
 * How long after a move that leaves the payment PENDING its records wait for more before they are sent (a payment's
 * outcome sends its records at once, with its start's when they are still here).
 */
export const RECORD_FLUSH_MS = 1_000;
/** A send to the queue that failed is tried again after 1 s, 2 s, 4 s, … at most this long apart, until it goes. */
export const RECORD_RETRY_MAX_MS = 60_000;
/**
 * Records sent but not reported landed (the queue's consumer kept failing, its retries and its dead-letter queue's
 * ran out) are sent again this long after, then twice as long after each time, at most `RECORD_RESEND_MAX_MS`.
 */
export const RECORD_RESEND_MS = 60_000;
export const RECORD_RESEND_MAX_MS = 30 * 60_000;
/**
 * A PENDING payment is swept this long after its `validBefore`: past the chain's own expiry margin
 * (src/gateway/chain-outcome.ts), so the chain's answer is final (used, or expired unused).
 */
export const SWEEP_AFTER_EXPIRY_MS = 120_000;
/** A sweep the chain did not answer (or answered "not yet") is tried again this much later. */
export const SWEEP_RETRY_MS = 5 * 60_000;

/** Where a PENDING payment's request left it, as its sweep is told: the Cron sweep's `answerKept`, `requestFinished`. */
export interface LeftByRequest {
  /** The upstream's answer is kept (before its settlement was sent, or with an unknown outcome). */
  answerKept: boolean;
  /** Its request recorded an outcome (`leaveUnknown`): it did not die before settling. */
  requestFinished: boolean;
}

/** Where a PENDING payment stands on chain, as its sweep reads it (the gateway's `ChainOutcome` fits). */
export type SweptOutcome =
  | { status: "COMPLETED"; txHash: string }
  | { status: "FAILED"; reason: string }
  | { status: "UNKNOWN"; reason: string };

/** Records sent in one queue message (a payment has 2 to 6: well under a message's 128 KB). */
const RECORDS_PER_MESSAGE = 50;

/** The moves of the table as `[from, to]` pairs a stored transaction may take in the read model. */
export const READ_MODEL_MOVES = Object.values(PAYMENT_MOVES).flatMap((m) =>
  m.from === null ? [] : [[m.from, m.to] as const],
) satisfies (readonly [TransactionStatus, TransactionStatus])[];

/**
 * What a move asks of the object: the transaction's new values (the whole row for `start`), its events, and its paid
 * answer: `start`'s claim (the whole row), values merged onto a claim (`complete`'s keep, `leaveUnknown`'s hold), or
 * `null` (`fail`: the answer and its claim gone).
 */
export interface MoveRecord {
  transaction: Partial<NewTransaction>;
  events: NewEvent[];
  answer?: Partial<PaidAnswerRow> | null;
  /** `start`'s: what settles the payment from the chain if its request cannot (its object sweeps it past expiry). */
  pending?: PendingPayment;
}

/**
 * One payment's records as its object sends them to the payment-records queue: each as the object stores it (JSON,
 * its dates marked: `parseRecord`), with its number there (`seqs`), to report it landed. A record sent by the gateway
 * itself (a discovery listing) has no object to report to: no `seqs`.
 */
export interface RecordsMessage {
  transactionId: string;
  seqs: number[];
  records: string[];
  /** Sent by a session's channel object (`CHANNELS`, by this name) instead of a payment's: told there they landed. */
  channel?: string;
}

/** A payment presented again, as its object knows it: the same shape as D1's resend lookup answers. */
export type { KnownPayment } from "../../db/paid-answers.ts";

const DATE_KEYS = new Set([
  "createdAt",
  "settledAt",
  "answeredAt",
  "ownerUntil",
  "expiresAt",
  "at",
  "validBefore",
  "updatedAt",
  "openedAt",
  "lastCallAt",
]);
const revive = (_key: string, value: unknown) =>
  typeof value === "object" && value !== null && "$date" in value ? new Date((value as { $date: number }).$date) : value;
const store = (row: object) =>
  JSON.stringify(row, function (this: Record<string, unknown>, key, value) {
    const raw = this[key];
    return DATE_KEYS.has(key) && raw instanceof Date ? { $date: raw.getTime() } : value;
  });

/** A record as the object stores and sends it (JSON, its dates marked), and read back (its dates as dates). */
export const storeRecord = (record: PaymentRecord) => store(record);
export const parseRecord = (stored: string) => JSON.parse(stored, revive) as PaymentRecord;

/** A PENDING payment's sweep as the object keeps it: what settles it from the chain, and when it is due. */
interface SweepDue {
  pending: PendingPayment;
  at: number;
}

/** A record kept until the queue's consumer reports it landed: its number, itself, when it may be sent again. */
interface Unsent {
  seq: number;
  record: string;
  resendAt: number | null;
}

/** What the object keeps, each under its own key of its storage (values structured-cloned: dates stay dates). */
interface Stored {
  payment: NewTransaction;
  answer: PaidAnswerRow;
  sweep: SweepDue;
  /** Of an object named by a retry key: the payment holding it. */
  key: { transactionId: string; expiresAt: number };
  unsent: Unsent[];
  /** The next record's number. */
  seq: number;
  /** Sends of records in a row that failed (or went unreported), for backing off. */
  failures: number;
}

export class PaymentObject extends DurableObject<Env> {
  /**
   * The object's storage as keys and values (the storage's synchronous key-value API): no schema to create for each
   * new payment, and a move reads and writes a few keys in one storage transaction.
   */
  private readonly kv: SyncKvStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.kv = ctx.storage.kv;
  }

  private get<K extends keyof Stored>(key: K): Stored[K] | undefined {
    return this.kv.get<Stored[K]>(key);
  }

  private put<K extends keyof Stored>(key: K, value: Stored[K]): void {
    this.kv.put(key, value);
  }

  /** The payment's paid answer (its claim, and the answer once stored), or `undefined`. */
  private answer(): PaidAnswerRow | undefined {
    return this.get("answer");
  }

  /**
   * Of an object named by a retry key (`key:<paymentKey>`): claims the key for `transactionId` until `expiresAt`.
   * `false` when another payment holds it: its claim unexpired (or expired, unless `replaceExpired`) and not given up
   * (a FAILED payment's claim is gone, and its key free again). A holder not recorded yet (its start still on its
   * way) holds the key: two payments racing for one key, one claims it.
   */
  async claimKey(transactionId: string, expiresAt: Date, now: Date, replaceExpired: boolean): Promise<boolean> {
    const holder = this.get("key");
    if (holder && holder.transactionId !== transactionId && !(replaceExpired && holder.expiresAt <= now.getTime())) {
      const held = await this.env.PAYMENT_COORDINATOR.getByName(holder.transactionId).transaction();
      // Another claim may have landed while the holder was asked: only the holder seen decides.
      if (held?.status !== "FAILED" || this.get("key")?.transactionId !== holder.transactionId) return false;
    }
    this.put("key", { transactionId, expiresAt: expiresAt.getTime() });
    return true;
  }

  /** Of an object named by a retry key: the payment holding it, if any. */
  keyHolder(): string | undefined {
    return this.get("key")?.transactionId;
  }

  /** The payment with its unexpired paid answer (the resend lookup), or `undefined`. */
  known(now: Date): KnownPayment | undefined {
    const row = this.answer();
    if (!row || row.expiresAt.getTime() <= now.getTime()) return undefined;
    const transaction = this.transaction();
    if (!transaction) return undefined;
    return {
      row,
      status: transaction.status,
      txHash: transaction.txHash ?? null,
      payer: transaction.payerAddress ?? null,
      network: transaction.network,
    };
  }

  /**
   * Not a move: the upstream's answer kept on the claim of a payment standing at `pending` (before its settlement is
   * sent; unservable until `complete`). `false`, nothing stored, otherwise. Its sweep is brought forward to
   * `keptAnswerSweepMs` from now: if its request dies before recording an outcome, the sweep settles it.
   */
  async keepAnswer(pending: TransactionStatus, sealed: string | null): Promise<boolean> {
    const sweepAt = this.keptAnswerSweepMs === undefined ? undefined : Date.now() + this.keptAnswerSweepMs;
    const kept = this.ctx.storage.transactionSync(() => {
      const row = this.answer();
      if (!row || this.transaction()?.status !== pending) return false;
      this.put("answer", { ...row, answer: sealed });
      const due = this.sweepDue();
      if (due && sweepAt !== undefined && sweepAt < due.at) this.put("sweep", { ...due, at: sweepAt });
      return true;
    });
    const due = this.sweepDue();
    if (kept && due) await this.wakeBy(due.at);
    return kept;
  }

  /**
   * How long after its answer is kept a PENDING payment is swept (left to its request until then); `undefined`: only
   * past its expiry. This base class knows no chain to settle on: the gateway's coordinator sets it.
   */
  protected readonly keptAnswerSweepMs: number | undefined = undefined;

  /** The payment's transaction as this object last moved it, or `undefined` before `start`. */
  transaction(): NewTransaction | undefined {
    return this.get("payment");
  }

  /**
   * `move` of the payment, if it stands at the move's `from` (the table's guard; `null`: not recorded yet): its
   * transaction and events stored and queued for the read model in one storage transaction. `false`: refused,
   * nothing stored. A move that records the request's outcome (every move but `start`) is told to `moved`.
   */
  async move(move: PaymentMove, record: MoveRecord): Promise<boolean> {
    const { from, to } = PAYMENT_MOVES[move];
    const moved = this.ctx.storage.transactionSync(() => {
      const current = this.transaction();
      if ((current?.status ?? null) !== from) return false;
      const row = { ...current, ...record.transaction, status: to } as NewTransaction;
      this.put("payment", row);
      const type = PAYMENT_MOVES[move].webhook;
      const at = row.settledAt ?? new Date();
      const webhook = type ? { type, idPrefix: transactionDeliveryIdPrefix(row.id, type), at } : undefined;
      const records: PaymentRecord[] = [
        { kind: "transaction", row, ...(webhook ? { webhook } : {}) },
        ...record.events.map((e) => ({ kind: "event" as const, row: e })),
      ];
      let seq = this.get("seq") ?? 1;
      const unsent = this.get("unsent") ?? [];
      for (const r of records) unsent.push({ seq: seq++, record: storeRecord(r), resendAt: null });
      this.put("unsent", unsent);
      this.put("seq", seq);
      if (record.pending) {
        this.put("sweep", { pending: record.pending, at: record.pending.validBefore.getTime() + SWEEP_AFTER_EXPIRY_MS });
      }
      if (to !== "PENDING") this.kv.delete("sweep");
      if (record.answer === null) this.kv.delete("answer");
      else if (record.answer) {
        const answer = this.answer();
        if (move === "start" || answer) this.put("answer", { ...answer, ...record.answer } as PaidAnswerRow);
      }
      return true;
    });
    // An outcome's records leave at once, from here (no alarm to wake for them); a PENDING move's wait for more.
    if (moved && to === "PENDING") await this.wakeBy(Date.now() + RECORD_FLUSH_MS);
    else if (moved) this.ctx.waitUntil(this.sendRecords().catch(() => {})); // its start's alarm is the fallback
    if (move !== "start") this.moved();
    return moved;
  }

  /** After a move recording the request's outcome (made or refused): the gateway's coordinator wakes its copies. */
  protected moved(): void {}

  /** Records not yet in D1 (0 once the queue's consumer reported them all landed). */
  unsentRecords(): number {
    return this.get("unsent")?.length ?? 0;
  }

  /** The alarm set for `at` at the latest (an earlier one stays). */
  private async wakeBy(at: number) {
    const set = await this.ctx.storage.getAlarm();
    if (set === null || set > at) await this.ctx.storage.setAlarm(at);
  }

  /** The payment's sweep, while it stands PENDING: what settles it, and when it is due. */
  private sweepDue(): SweepDue | undefined {
    return this.get("sweep");
  }

  /**
   * The alarm: a PENDING payment's sweep when due (its chain outcome as the ledger's move), then the oldest unsent
   * records to D1; the alarm is set again for what is left (records, or the next sweep).
   */
  override async alarm(): Promise<void> {
    await this.sweep();
    await this.sendRecords();
    const due = this.sweepDue();
    if (due) await this.wakeBy(due.at);
  }

  /**
   * Where a PENDING payment stands on chain. This base class knows no chain: the gateway's coordinator answers
   * (src/gateway/coordinator.ts), so the object never imports the gateway.
   */
  protected chainOutcome(_transaction: NewTransaction, _pending: PendingPayment, _left: LeftByRequest): Promise<SweptOutcome> {
    return Promise.resolve({ status: "UNKNOWN", reason: "no chain to ask" });
  }

  /**
   * A due sweep: the chain's outcome (the coordinator may settle first: see `keptAnswerSweepMs`) recorded as `complete`
   * or `fail`; not known yet, asked again later (by its expiry's sweep at the latest).
   */
  private async sweep(): Promise<void> {
    const due = this.sweepDue();
    const t = this.transaction();
    if (!due || !t || due.at > Date.now()) return;
    const answer = this.answer();
    const left = { answerKept: !!answer?.answer, requestFinished: !!answer?.answeredAt };
    const outcome = await this.chainOutcome(t, due.pending, left).catch(() => ({ status: "UNKNOWN" }) as const);
    if (outcome.status === "UNKNOWN") {
      const pastExpiry = due.pending.validBefore.getTime() + SWEEP_AFTER_EXPIRY_MS;
      const now = Date.now();
      const at = now < pastExpiry ? Math.min(pastExpiry, now + SWEEP_RETRY_MS) : now + SWEEP_RETRY_MS;
      // Still PENDING (the request may have recorded its outcome while the chain was asked).
      const still = this.sweepDue();
      if (still) this.put("sweep", { ...still, at });
      return;
    }
    const ref: PaymentRef = {
      transactionId: t.id,
      tenantId: t.tenantId,
      paywallId: t.paywallId,
      serviceId: t.serviceId ?? null,
      protocol: t.protocol,
      network: t.network as PaymentRef["network"],
      amount: t.amount,
    };
    const bySweep: Outcome = { statusCode: null, responseTime: null, settledBy: "sweep" };
    if (outcome.status === "COMPLETED") {
      const [change, event] = completeRows(ref, outcome.txHash, bySweep);
      const expiresAt = new Date(Date.now() + PAID_ANSWER_KEEP_SECONDS * 1000);
      await this.move("complete", { transaction: change, events: [event], answer: { expiresAt } });
    } else {
      const [change, event] = failRows(ref, outcome.reason, bySweep);
      await this.move("fail", { transaction: change, events: [event], answer: null });
    }
  }

  /**
   * Sends the oldest records not sent yet (or sent long enough ago without landing) to the queue as one message; they
   * stay here until the consumer reports them landed (`recordsLanded`). A send that fails is tried again later,
   * backing off; the alarm comes back to send what is left, or to send again what has not landed.
   */
  private async sendRecords(): Promise<void> {
    const now = Date.now();
    const batch = (this.get("unsent") ?? [])
      .filter((u) => u.resendAt === null || u.resendAt <= now)
      .slice(0, RECORDS_PER_MESSAGE);
    if (batch.length > 0) {
      const failures = this.get("failures") ?? 0;
      try {
        await this.send(
          batch.map((b) => b.seq),
          batch.map((b) => b.record),
        );
      } catch {
        this.put("failures", failures + 1);
        await this.ctx.storage.setAlarm(now + Math.min(RECORD_RETRY_MAX_MS, 1_000 * 2 ** failures));
        return;
      }
      // Sent again, these waited past `RECORD_RESEND_MS`: each time twice as long before the next.
      const resent = batch.some((b) => b.resendAt !== null);
      const wait = resent ? Math.min(RECORD_RESEND_MAX_MS, RECORD_RESEND_MS * 2 ** failures) : RECORD_RESEND_MS;
      const sent = new Set(batch.map((b) => b.seq));
      // Read again: the consumer may have reported some landed while the message was on its way.
      const unsent = (this.get("unsent") ?? []).map((u) => (sent.has(u.seq) ? { ...u, resendAt: now + wait } : u));
      this.put("unsent", unsent);
      if (resent) this.put("failures", failures + 1);
      else this.kv.delete("failures");
    }
    const left = this.get("unsent") ?? [];
    if (left.length > 0) await this.ctx.storage.setAlarm(Math.max(Math.min(...left.map((u) => u.resendAt ?? 0)), Date.now()));
  }

  /** Of the queue's consumer: these records are in D1; the object forgets them (and, with nothing left, its alarm). */
  async recordsLanded(seqs: number[]): Promise<void> {
    const landed = new Set(seqs);
    const unsent = (this.get("unsent") ?? []).filter((u) => !landed.has(u.seq));
    this.put("unsent", unsent);
    if (unsent.length > 0) return;
    this.kv.delete("failures");
    if (!this.sweepDue()) await this.ctx.storage.deleteAlarm();
  }

  /** One message of records to the payment-records queue (its consumer: src/core/ledger/records-queue.ts). */
  protected async send(seqs: number[], records: string[]): Promise<void> {
    // Records exist only after a move, which stored the transaction (this object's name).
    const transactionId = this.transaction()!.id;
    await this.env.PAYMENT_RECORDS_QUEUE.send({ transactionId, seqs, records } satisfies RecordsMessage);
  }
}
