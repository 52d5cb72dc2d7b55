// The payment ledger's moves against the real D1: each one happens at most once, only from the state the table
// names, writes its transaction, event and pending row together, and two racing moves of one payment leave one winner.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import gatewayDoc from "../../docs/gateway.md?raw";
import { outcomeEventIdOf, requestEventIdOf } from "../../src/core/ledger/ids.ts";
import {
  completePayment,
  failPayment,
  keepAnswerBeforeSettlement,
  leavePaymentUnknown,
  PAYMENT_MOVES,
  type PaymentMove,
  type PaymentRef,
  paymentStatus,
  startPayment,
} from "../../src/core/ledger/ledger.ts";
import { TRANSACTION_STATUSES } from "../../src/db/schema.ts";
import { createPaywallFor } from "../history/support.ts";
import { createTenant, db } from "../support/factories.ts";
import { completeRecorded, failRecorded, recordPayment, txHash } from "../support/payments.ts";
import { createEndpoint, hookTenant, inboxUrl, newInbox } from "../webhooks/support.ts";
import { newPaymentOf } from "./records-support.ts";

const row = (sql: string, ...params: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...params)
    .first<Record<string, unknown>>();
const count = async (sql: string, ...params: unknown[]) => (await row(sql, ...params))?.n as number;

/** Everything the moves of one payment wrote. */
async function written(ref: PaymentRef) {
  return {
    transaction: await row(
      "SELECT status, tx_hash, failure_reason, settled_at IS NOT NULL AS settled FROM transactions WHERE id = ?",
      ref.transactionId,
    ),
    events: (
      await env.DB.prepare("SELECT id, event_type FROM events WHERE paywall_id = ? AND id IN (?, ?) ORDER BY event_type")
        .bind(ref.paywallId, requestEventIdOf(ref.transactionId), outcomeEventIdOf(ref.transactionId))
        .all<{ event_type: string }>()
    ).results.map((e) => e.event_type),
    pending: await count("SELECT count(*) AS n FROM pending_payments WHERE transaction_id = ?", ref.transactionId),
  };
}

const freshPayment = async () =>
  recordPayment(await createPaywallFor(await createTenant()), { network: "base-sepolia", amount: "2500" });

/** The moves the state diagram of docs/gateway.md draws: `from --> to: move`. */
function diagramMoves(markdown: string): string[] {
  const block = /## Payment states[\s\S]*?```mermaid\n([\s\S]*?)```/.exec(markdown)?.[1] ?? "";
  return block
    .split("\n")
    .map((line) => /^\s*(\S+) --> (\S+?):\s*(\w+)/.exec(line))
    .flatMap((m) => (m ? [`${m[1] === "[*]" ? "null" : m[1]} -> ${m[2]}: ${m[3]}`] : []))
    .sort();
}

describe("the transition table", () => {
  it("is what the state diagram in docs/gateway.md draws", () => {
    const table = Object.entries(PAYMENT_MOVES)
      .map(([move, m]) => `${m.from ?? "null"} -> ${m.to}: ${move}`)
      .sort();
    expect(diagramMoves(gatewayDoc)).toEqual(table);
  });

  it("names every status; only `start` begins a payment; COMPLETED and FAILED are final", () => {
    const moves = Object.values(PAYMENT_MOVES);
    expect(new Set(moves.map((m) => m.to))).toEqual(new Set(TRANSACTION_STATUSES));
    expect(
      Object.entries(PAYMENT_MOVES)
        .filter(([, m]) => m.from === null)
        .map(([name]) => name),
    ).toEqual(["start"]);
    for (const final of ["COMPLETED", "FAILED"]) expect(moves.filter((m) => m.from === final)).toEqual([]);
  });
});

describe("ledger moves", () => {
  it("start: PENDING with its REQUEST event and what settles it from the chain; the same payment again writes nothing", async () => {
    const paywall = await createPaywallFor(await createTenant());
    const ref = await recordPayment(paywall, { network: "tempo-testnet", protocol: "mpp", amount: "700" });
    expect(await written(ref)).toEqual({
      transaction: { status: "PENDING", tx_hash: null, failure_reason: null, settled: 0 },
      events: ["REQUEST"],
      pending: 1,
    });
    const stored = await row(
      "SELECT tenant_id, service_id, currency, amount, protocol FROM transactions WHERE id = ?",
      ref.transactionId,
    );
    expect(stored).toEqual({
      tenant_id: paywall.tenantId,
      service_id: paywall.serviceId,
      currency: "pathUSD",
      amount: "700",
      protocol: "mpp",
    });
  });

  it("complete: COMPLETED with its hash and SUCCESS event, the pending row gone; then nothing moves it again", async () => {
    const ref = await freshPayment();
    const hash = txHash();
    expect(await completeRecorded(ref, hash)).toBe(true);
    const done = {
      transaction: { status: "COMPLETED", tx_hash: hash, failure_reason: null, settled: 1 },
      events: ["REQUEST", "SUCCESS"],
      pending: 0,
    };
    expect(await written(ref)).toEqual(done);
    expect(await completeRecorded(ref)).toBe(false);
    expect(await failRecorded(ref)).toBe(false);
    expect(await leavePaymentUnknown(db(), ref, txHash())).toBe(false);
    expect(await written(ref)).toEqual(done);
  });

  it("fail: FAILED with its reason and ERROR event; then nothing moves it again", async () => {
    const ref = await freshPayment();
    expect(await failRecorded(ref, "upstream answered 503")).toBe(true);
    const done = {
      transaction: { status: "FAILED", tx_hash: null, failure_reason: "upstream answered 503", settled: 1 },
      events: ["ERROR", "REQUEST"],
      pending: 0,
    };
    expect(await written(ref)).toEqual(done);
    expect(await completeRecorded(ref)).toBe(false);
    expect(await written(ref)).toEqual(done);
  });

  it("leaveUnknown: still PENDING, the hash kept for the tenant and the sweep; a later outcome still closes it", async () => {
    const ref = await freshPayment();
    const hash = txHash();
    expect(await leavePaymentUnknown(db(), ref, hash)).toBe(true);
    expect(await paymentStatus(db(), ref.transactionId)).toEqual({ status: "PENDING", txHash: hash });
    expect((await written(ref)).pending).toBe(1);
    expect(await completeRecorded(ref, hash)).toBe(true);
  });

  it("racing outcomes of one payment (the request and the sweep): exactly one wins and its record is whole", async () => {
    const refs = await Promise.all(Array.from({ length: 12 }, freshPayment));
    const results = await Promise.all(
      refs.map((ref) => Promise.all([completeRecorded(ref), failRecorded(ref), completeRecorded(ref)])),
    );
    for (const [i, [c1, f, c2]] of results.entries()) {
      expect([c1, f, c2].filter(Boolean), `payment ${i}`).toHaveLength(1);
      const w = await written(refs[i] as PaymentRef);
      expect(w.events).toEqual(f ? ["ERROR", "REQUEST"] : ["REQUEST", "SUCCESS"]);
      expect(w.transaction?.status).toBe(f ? "FAILED" : "COMPLETED");
      expect(w.pending).toBe(0);
    }
  });
});

describe("the move table, enforced by the ledger", () => {
  type Stand = "not recorded" | "PENDING" | "COMPLETED" | "FAILED";

  /** A payment of a tenant with a webhook endpoint for every transaction event, brought to `stand` by the ledger. */
  async function paymentAt(stand: Stand) {
    const who = await hookTenant();
    await createEndpoint(who, inboxUrl(newInbox()));
    const { paywall } = who;
    const { ref, start: recorded } = newPaymentOf(paywall);
    const start = () => startPayment(db(), recorded);
    if (stand !== "not recorded") expect(await start()).toBe(true);
    if (stand === "COMPLETED") expect(await completeRecorded(ref)).toBe(true);
    if (stand === "FAILED") expect(await failRecorded(ref)).toBe(true);
    return { ref, start };
  }

  /** Every row any move writes about one payment: its transaction, events, pending row, answer and deliveries. */
  async function everything(ref: PaymentRef) {
    const all = async (sql: string) => (await env.DB.prepare(sql).bind(ref.transactionId).all()).results;
    const ids = [requestEventIdOf(ref.transactionId), outcomeEventIdOf(ref.transactionId)];
    return {
      transaction: await all("SELECT * FROM transactions WHERE id = ?"),
      events: (
        await env.DB.prepare("SELECT * FROM events WHERE id IN (?, ?) ORDER BY id")
          .bind(...ids)
          .all()
      ).results,
      pending: await all("SELECT * FROM pending_payments WHERE transaction_id = ?"),
      answer: await all("SELECT * FROM paid_answers WHERE transaction_id = ?"),
      deliveries: await all("SELECT id, event_type FROM webhook_deliveries WHERE transaction_id = ? ORDER BY id"),
    };
  }

  /** Each move, tried on a payment standing at `ref`. */
  const attempt: Record<PaymentMove, (p: Awaited<ReturnType<typeof paymentAt>>) => Promise<boolean>> = {
    start: ({ start }) => start(),
    complete: ({ ref }) =>
      completePayment(db(), ref, txHash(), { statusCode: 200, responseTime: 1 }, { sealed: "x", at: new Date() }),
    fail: ({ ref }) => failPayment(db(), ref, "upstream answered 502", { statusCode: 502, responseTime: 1 }),
    leaveUnknown: ({ ref }) => leavePaymentUnknown(db(), ref, txHash(), { sealed: "x", at: new Date() }),
  };

  const stands: Stand[] = ["not recorded", "PENDING", "COMPLETED", "FAILED"];
  const wrong = Object.entries(PAYMENT_MOVES).flatMap(([move, m]) =>
    stands.filter((s) => s !== (m.from ?? "not recorded")).map((stand) => [move as PaymentMove, stand] as const),
  );

  it.each(wrong)("%s from %s is refused: `false`, and nothing about the payment changes", async (move, stand) => {
    const payment = await paymentAt(stand);
    const before = await everything(payment.ref);
    expect(await attempt[move](payment)).toBe(false);
    expect(await everything(payment.ref)).toEqual(before);
  });

  it("each move from the status the table names happens (the guard refuses nothing else)", async () => {
    for (const [move, m] of Object.entries(PAYMENT_MOVES) as [PaymentMove, (typeof PAYMENT_MOVES)[PaymentMove]][]) {
      const payment = await paymentAt(m.from ?? "not recorded");
      expect(await attempt[move](payment), move).toBe(true);
      expect((await paymentStatus(db(), payment.ref.transactionId))?.status, move).toBe(m.to);
    }
  });

  it("the answer kept before settling (not a move) is kept only on a PENDING payment", async () => {
    for (const stand of ["COMPLETED", "FAILED"] as const) {
      const payment = await paymentAt(stand);
      const before = await everything(payment.ref);
      expect(await keepAnswerBeforeSettlement(db(), payment.ref, { sealed: "late", at: new Date() })).toBe(false);
      expect(await everything(payment.ref)).toEqual(before);
    }
  });
});

/** Every source and test file, as text. */
const sources = {
  ...import.meta.glob<string>("../../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true }),
  ...import.meta.glob<string>("../**/*.ts", { query: "?raw", import: "default", eager: true }),
};

describe("no code outside the ledger writes a payment's status", () => {
  // The ledger's own writes, the one test-only fixture, and the storage floor of the bench (a Worker of its own that
  // measures raw D1 against a database of its own, never the project's code).
  const allowed = ["../../src/db/ledger.ts", "../support/ledger-fixture.ts", "../bench/fixtures/storage-floor.ts"];
  // Spelled in parts, so that this file does not match itself.
  const table = ["trans", "actions"].join("");
  const writes = [
    new RegExp(`\\.(insert|update)\\(\\s*${table}\\s*\\)`),
    new RegExp(`\\b(INSERT\\s+(OR\\s+\\w+\\s+)?INTO|UPDATE|REPLACE\\s+INTO)\\s+${table}\\b`, "i"),
  ];

  it("the scan sees the project's files, the ledger's writes among them", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(300);
    expect(writes.some((w) => w.test(sources["../../src/db/ledger.ts"] ?? ""))).toBe(true);
  });

  it("only the ledger and the test-only fixture insert or update transactions", () => {
    const offenders = Object.entries(sources)
      .filter(([path, text]) => !allowed.includes(path) && writes.some((w) => w.test(text)))
      .map(([path]) => path);
    expect(offenders).toEqual([]);
  });
});
