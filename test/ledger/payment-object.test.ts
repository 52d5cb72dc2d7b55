// Payments recorded in their Durable Objects, D1 as the read model: against the real objects (their SQLite storage and
// alarms) and the real D1, read back through the public API as a tenant reads them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { outcomeEventIdOf, requestEventIdOf } from "../../src/core/ledger/ids.ts";
import type { PaymentRef } from "../../src/core/ledger/ledger.ts";
import { READ_MODEL_MOVES, RECORD_FLUSH_MS } from "../../src/core/ledger/payment-object.ts";
import {
  completePayment,
  failPayment,
  findKnownPayment,
  keepAnswerBeforeSettlement,
  leavePaymentUnknown,
  mayBeRecordedInD1,
  paymentStatus,
  startPayment,
} from "../../src/core/ledger/recorded.ts";
import { PENDING_CLAIM_MS } from "../../src/core/payments.ts";
import { applyPaymentRecords } from "../../src/db/ledger.ts";
import { randomHex } from "../../src/lib/ids.ts";
import { createPaywallFor } from "../history/support.ts";
import { api } from "../support/client.ts";
import { printToRunner } from "../support/console.ts";
import { createApiKey, db } from "../support/factories.ts";
import { txHash } from "../support/payments.ts";
import { createEndpoint, inboxUrl, newInbox } from "../webhooks/support.ts";
import { newPaymentOf, startedAndCompleted } from "./records-support.ts";

/** The read model's promise: a move reaches D1 within this bound (docs/gateway.md). */
const BOUND_MS = 5_000;

async function newPayment() {
  const { key, tenant } = await createApiKey();
  const paywall = await createPaywallFor(tenant);
  const { ref, start } = newPaymentOf(paywall);
  return { key, ref, start };
}

/** What the tenant reads of a payment: its transaction (or `undefined`) and its events' types, through the API. */
async function tenantReads(key: string, ref: PaymentRef) {
  const one = await api(`/v1/transactions/${ref.transactionId}`, { key });
  const events = await api(`/v1/events?limit=100`, { key });
  const own = new Set([requestEventIdOf(ref.transactionId), outcomeEventIdOf(ref.transactionId)]);
  return {
    transaction: one.status === 200 ? (one.body.data as { status: string; txHash: string | null }) : undefined,
    events: (events.body.data as { id: string; eventType: string }[])
      .filter((e) => own.has(e.id))
      .map((e) => e.eventType)
      .sort(),
  };
}

/** Polls until `done` holds of what the tenant reads, at most `ms`; returns the last read and when it held. */
async function until(key: string, ref: PaymentRef, done: (r: Awaited<ReturnType<typeof tenantReads>>) => boolean, ms: number) {
  const started = Date.now();
  for (;;) {
    const read = await tenantReads(key, ref);
    if (done(read) || Date.now() - started > ms) return { read, after: Date.now() - started };
    await new Promise((r) => setTimeout(r, 100));
  }
}

const rowCount = async (sql: string, id: string) => (await env.DB.prepare(sql).bind(id).first<{ n: number }>())?.n ?? Number.NaN;

// A record's way to D1 (the object's alarm, the queue's batch, the consumer) takes a few seconds: past the default 5 s.
describe("payments recorded in their objects", { timeout: 15_000 }, () => {
  it("a move writes no D1 row on its caller's path; the records reach D1 within the bound, read through the API", async () => {
    const { key, ref, start } = await newPayment();
    const moved = Date.now();
    expect(await startPayment(env, start)).toBe(true);
    const hash = txHash();
    expect(await completePayment(env, ref, hash, { statusCode: 200, responseTime: 12 })).toBe(true);
    // Right after the moves: the object knows, D1 does not yet (the tenant's read may lag).
    expect(await paymentStatus(env, ref.transactionId)).toEqual({ status: "COMPLETED", txHash: hash });
    expect(await rowCount("SELECT count(*) AS n FROM transactions WHERE id = ?", ref.transactionId)).toBe(0);
    expect(await rowCount("SELECT count(*) AS n FROM events WHERE id LIKE ? || '%'", `evt_${ref.transactionId.slice(9)}`)).toBe(
      0,
    );
    const { read, after } = await until(key, ref, (r) => r.transaction?.status === "COMPLETED", BOUND_MS);
    expect(read).toEqual({
      transaction: expect.objectContaining({ status: "COMPLETED", txHash: hash }),
      events: ["REQUEST", "SUCCESS"],
    });
    const lag = Date.now() - moved;
    expect(lag).toBeGreaterThanOrEqual(RECORD_FLUSH_MS - 50);
    expect(after).toBeLessThan(BOUND_MS);
    printToRunner(`payment records reached the read model ${lag} ms after the first move`);
  });

  it("each move's webhook deliveries reach D1 with its records", async () => {
    const { key, ref, start } = await newPayment();
    await createEndpoint({ key }, inboxUrl(newInbox()));
    expect(await startPayment(env, start)).toBe(true);
    expect(await leavePaymentUnknown(env, ref, txHash())).toBe(true);
    expect(await completePayment(env, ref, txHash(), { statusCode: 200, responseTime: 1 })).toBe(true);
    await until(key, ref, (r) => r.transaction?.status === "COMPLETED", BOUND_MS);
    const deliveries = async () =>
      (
        await env.DB.prepare("SELECT event_type FROM webhook_deliveries WHERE transaction_id = ? ORDER BY event_type")
          .bind(ref.transactionId)
          .all<{ event_type: string }>()
      ).results.map((d) => d.event_type);
    expect(await deliveries()).toEqual(["transaction.completed", "transaction.pending"]);
  });

  it("a payment is never in two states: racing outcomes, one wins, in the object and in D1", async () => {
    const { key, ref, start } = await newPayment();
    expect(await startPayment(env, start)).toBe(true);
    expect(await startPayment(env, start)).toBe(false);
    const results = await Promise.all([
      completePayment(env, ref, txHash(), { statusCode: 200, responseTime: 1 }),
      failPayment(env, ref, "upstream answered 502", { statusCode: 502, responseTime: 1 }),
      leavePaymentUnknown(env, ref, txHash()),
      completePayment(env, ref, txHash(), { statusCode: 200, responseTime: 1 }),
    ]);
    const wins = results.filter(Boolean).length;
    // `leaveUnknown` keeps it PENDING, so an outcome may still follow it: at most one outcome wins.
    const final = await paymentStatus(env, ref.transactionId);
    expect(["COMPLETED", "FAILED"]).toContain(final?.status);
    expect(wins - (results[2] ? 1 : 0)).toBe(1);
    const { read } = await until(key, ref, (r) => r.events.length === 2, BOUND_MS);
    expect(read.transaction?.status).toBe(final?.status);
    expect(read.events).toEqual(final?.status === "COMPLETED" ? ["REQUEST", "SUCCESS"] : ["ERROR", "REQUEST"]);
  });

  it("a batch that fails is sent again until it lands: nothing lost, nothing twice", { timeout: 20_000 }, async () => {
    const { key, ref, start } = await newPayment();
    const trigger = `fault_${ref.transactionId}`;
    await env.DB.prepare(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON transactions WHEN NEW.id = '${ref.transactionId}'
       BEGIN SELECT RAISE(ABORT, 'read model unavailable'); END`,
    ).run();
    try {
      expect(await startPayment(env, start)).toBe(true);
      expect(await completePayment(env, ref, txHash(), { statusCode: 200, responseTime: 1 })).toBe(true);
      // The first batch, and its first retry, fail.
      await new Promise((r) => setTimeout(r, RECORD_FLUSH_MS + 1_500));
      expect((await tenantReads(key, ref)).transaction).toBeUndefined();
      expect(await env.PAYMENT_COORDINATOR.getByName(ref.transactionId).unsentRecords()).toBe(4);
    } finally {
      await env.DB.prepare(`DROP TRIGGER ${trigger}`).run();
    }
    const { read } = await until(key, ref, (r) => r.transaction?.status === "COMPLETED", 10_000);
    expect(read.events).toEqual(["REQUEST", "SUCCESS"]);
    expect(await env.PAYMENT_COORDINATOR.getByName(ref.transactionId).unsentRecords()).toBe(0);
  });
});

describe("the read model's batches", () => {
  async function recordsOf() {
    const { key, ref, start } = await newPayment();
    await createEndpoint({ key }, inboxUrl(newInbox()));
    const hash = txHash();
    const { started, completed } = startedAndCompleted(ref, start, hash, 1);
    return { ref, hash, started, completed };
  }

  const stored = async (ref: PaymentRef) => ({
    transaction: (await env.DB.prepare("SELECT status, tx_hash FROM transactions WHERE id = ?").bind(ref.transactionId).all())
      .results,
    events: (
      await env.DB.prepare("SELECT count(*) AS n FROM events WHERE id IN (?, ?)")
        .bind(requestEventIdOf(ref.transactionId), outcomeEventIdOf(ref.transactionId))
        .first<{ n: number }>()
    )?.n,
    deliveries: await rowCount("SELECT count(*) AS n FROM webhook_deliveries WHERE transaction_id = ?", ref.transactionId),
  });

  it("a batch applied twice records once (transaction, events, webhook deliveries)", async () => {
    const { ref, hash, started, completed } = await recordsOf();
    expect(await applyPaymentRecords(db(), [...started, ...completed], READ_MODEL_MOVES)).toHaveLength(1);
    const once = await stored(ref);
    expect(await applyPaymentRecords(db(), [...started, ...completed], READ_MODEL_MOVES)).toEqual([]);
    expect(await stored(ref)).toEqual(once);
    expect(once).toEqual({ transaction: [{ status: "COMPLETED", tx_hash: hash }], events: 2, deliveries: 1 });
  });

  it("an older batch applied after a newer one never moves the payment back", async () => {
    const { ref, hash, started, completed } = await recordsOf();
    await applyPaymentRecords(db(), completed, READ_MODEL_MOVES);
    await applyPaymentRecords(db(), started, READ_MODEL_MOVES);
    expect((await stored(ref)).transaction).toEqual([{ status: "COMPLETED", tx_hash: hash }]);
  });
});

describe("the resend lookup, answered by the objects", () => {
  async function claimed(paymentKey = randomHex(32)) {
    const payment = await newPayment();
    const now = Date.now();
    const claim = {
      paymentKey,
      fingerprint: randomHex(32),
      credential: randomHex(32),
      buyerProof: randomHex(32),
      ownerUntil: new Date(now + 30_000),
      expiresAt: new Date(now + 60_000),
    };
    return { ...payment, paymentKey, start: { ...payment.start, claim } };
  }
  const d1Answers = async (id: string) => rowCount("SELECT count(*) AS n FROM paid_answers WHERE transaction_id = ?", id);

  it("a known payment key finds its payment and, once COMPLETED, its stored answer; D1 holds no paid answer", async () => {
    const { ref, start, paymentKey } = await claimed();
    expect(await startPayment(env, start)).toBe(true);
    const pending = await findKnownPayment(env, { paymentKey }, new Date());
    expect(pending).toMatchObject({ status: "PENDING", row: { transactionId: ref.transactionId, answer: null } });
    expect(await keepAnswerBeforeSettlement(env, ref, { sealed: "early", at: new Date() })).toBe(true);
    const hash = txHash();
    const at = new Date();
    expect(await completePayment(env, ref, hash, { statusCode: 200, responseTime: 1 }, { sealed: "sealed-answer", at })).toBe(
      true,
    );
    const done = await findKnownPayment(env, { paymentKey }, new Date());
    expect(done).toMatchObject({ status: "COMPLETED", txHash: hash, row: { answer: "sealed-answer", answeredAt: at } });
    expect(await findKnownPayment(env, { transactionId: ref.transactionId }, new Date())).toEqual(done);
    expect(await keepAnswerBeforeSettlement(env, ref, { sealed: "late", at: new Date() })).toBe(false);
    expect(await d1Answers(ref.transactionId)).toBe(0);
  });

  it("a retry key another payment holds refuses the start: nothing recorded", async () => {
    const first = await claimed();
    const second = await claimed(first.paymentKey);
    expect(await startPayment(env, first.start)).toBe(true);
    expect(await startPayment(env, second.start)).toBe(false);
    expect(await paymentStatus(env, second.ref.transactionId)).toBeUndefined();
    expect((await findKnownPayment(env, { paymentKey: first.paymentKey }, new Date()))?.row.transactionId).toBe(
      first.ref.transactionId,
    );
  });

  it("a payment that failed gives its retry key up: a new payment may take it", async () => {
    const first = await claimed();
    const second = await claimed(first.paymentKey);
    expect(await startPayment(env, first.start)).toBe(true);
    expect(await failPayment(env, first.ref, "upstream answered 502", { statusCode: 502, responseTime: 1 })).toBe(true);
    expect(await startPayment(env, second.start)).toBe(true);
    expect((await findKnownPayment(env, { paymentKey: first.paymentKey }, new Date()))?.row.transactionId).toBe(
      second.ref.transactionId,
    );
  });

  it("fail takes the answer and its claim away: the payment is no longer found", async () => {
    const { ref, start, paymentKey } = await claimed();
    expect(await startPayment(env, start)).toBe(true);
    expect(await leavePaymentUnknown(env, ref, txHash(), { sealed: "held", at: new Date() })).toBe(true);
    expect((await findKnownPayment(env, { paymentKey }, new Date()))?.row.answer).toBe("held");
    expect(
      await failPayment(env, ref, "the payment's authorization expired unused", { statusCode: null, responseTime: null }),
    ).toBe(true);
    expect(await findKnownPayment(env, { paymentKey }, new Date())).toBeUndefined();
  });
});

describe("a payment presented again that no object knows: D1 asked only where the D1 ledger may have recorded it", () => {
  const switchedAt = "2026-11-01T12:00:00.000Z";
  const at = Date.parse(switchedAt);
  const now = new Date(at + 3_600_000);
  it("nothing was recorded in D1 (no switch, or an unreadable one): never", () => {
    expect(mayBeRecordedInD1(undefined, undefined, now)).toBe(false);
    expect(mayBeRecordedInD1("", new Date(at - 1), now)).toBe(false);
    expect(mayBeRecordedInD1("not a date", undefined, now)).toBe(false);
  });
  it("a credential accepted before the switch, or one that cannot be dated (a retry key): while a D1 claim may hold", () => {
    expect(mayBeRecordedInD1(switchedAt, new Date(at - 1), now)).toBe(true);
    expect(mayBeRecordedInD1(switchedAt, undefined, now)).toBe(true);
    expect(mayBeRecordedInD1(switchedAt, undefined, new Date(at + PENDING_CLAIM_MS - 1))).toBe(true);
    expect(mayBeRecordedInD1(switchedAt, undefined, new Date(at + PENDING_CLAIM_MS))).toBe(false);
    expect(mayBeRecordedInD1(switchedAt, new Date(at - 1), new Date(at + PENDING_CLAIM_MS))).toBe(false);
  });
  it("a credential that cannot have been accepted before the switch: never", () => {
    expect(mayBeRecordedInD1(switchedAt, new Date(at), now)).toBe(false);
    expect(mayBeRecordedInD1(switchedAt, new Date(at + 1), new Date(at + 2))).toBe(false);
  });
});
