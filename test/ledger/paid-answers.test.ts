// A payment's kept answer moves with its payment, in the ledger's own batches: the start claims it, `complete` stores
// it (servable), `leaveUnknown` stores it unservable, `fail` deletes it, each guarded by the status the move leaves;
// a retry key pays once; the answer is sealed, bound to its tenant and payment; the hourly cleanup deletes expired ones.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { paymentRetryKey } from "../../src/core/ledger/ids.ts";
import {
  completePayment,
  failPayment,
  leavePaymentUnknown,
  type PaidAnswerClaim,
  type PaymentRef,
  startPayment,
} from "../../src/core/ledger/ledger.ts";
import { NETWORK_TABLE } from "../../src/core/money/network-table.ts";
import { PAID_ANSWER_KEEP_SECONDS } from "../../src/core/payments.ts";
import { findKnownPayment } from "../../src/db/paid-answers.ts";
import type { Tenant } from "../../src/db/schema.ts";
import { decodeAnswer, encodeAnswer, openAnswer, requestFingerprint, sealAnswer } from "../../src/gateway/paid-answer.ts";
import worker from "../../src/index.ts";
import { randomHex } from "../../src/lib/ids.ts";
import { createPaywallFor } from "../history/support.ts";
import { consoleOutput } from "../support/console.ts";
import { createTenant, db } from "../support/factories.ts";
import { address, txHash } from "../support/payments.ts";

const answerRow = (transactionId: string) =>
  env.DB.prepare("SELECT answer, answered_at, expires_at, payment_key FROM paid_answers WHERE transaction_id = ?")
    .bind(transactionId)
    .first<{ answer: string | null; answered_at: number | null; expires_at: number; payment_key: string | null }>();

const answer = (marker: string) => ({
  status: 201,
  headers: new Headers([
    ["content-type", "application/json"],
    ["x-multi", "a"],
    ["x-multi", "b"],
  ]),
  body: new TextEncoder().encode(JSON.stringify({ marker })),
});

/** A started gateway payment with its claim (an x402 payment, optionally under a retry key). */
async function started(options: { paymentKey?: string | null; tenant?: Tenant } = {}) {
  const tenant = options.tenant ?? (await createTenant());
  const paywall = await createPaywallFor(tenant);
  const ref: PaymentRef = {
    transactionId: `txn_x402_${randomHex(20)}`,
    tenantId: paywall.tenantId,
    paywallId: paywall.id,
    serviceId: paywall.serviceId,
    protocol: "x402",
    network: "base-sepolia",
    amount: paywall.price,
  };
  const now = Date.now();
  const claim: PaidAnswerClaim = {
    paymentKey: options.paymentKey ?? null,
    fingerprint: "f".repeat(64),
    credential: "c".repeat(64),
    ownerUntil: new Date(now + 60_000),
    expiresAt: new Date(now + 86_400_000),
  };
  const ok = await startPayment(db(), {
    ...ref,
    currency: "USDC",
    payer: address(),
    method: "GET",
    pending: {
      reference: txHash(),
      validBefore: new Date(now + 300_000),
      asset: NETWORK_TABLE["base-sepolia"].asset,
      payTo: paywall.merchantWallet,
    },
    claim,
  });
  return { ref, ok, tenant };
}

const outcome = { statusCode: 201, responseTime: 5 };
const bytes = (text: string) => new Response(text).arrayBuffer();

describe("an answer as kept", () => {
  it("encodes status, headers (repeated names too) and body bytes, and decodes to the same", () => {
    const bytes = new Uint8Array([0, 10, 255, 10, 13]);
    const decoded = decodeAnswer(encodeAnswer({ ...answer("m"), body: bytes }));
    expect(decoded.status).toBe(201);
    expect([...decoded.headers]).toEqual([
      ["content-type", "application/json"],
      ["x-multi", "a, b"],
    ]);
    expect(decoded.headers.getSetCookie()).toEqual([]);
    expect([...(decoded.body as Uint8Array)]).toEqual([...bytes]);
  });

  it("the request fingerprint tells method, path, query and body apart", async () => {
    const base = await requestFingerprint("POST", "https://pay.example.com/api/x402/pay/s/a?x=1", await bytes("b"));
    const others = await Promise.all([
      requestFingerprint("PUT", "https://pay.example.com/api/x402/pay/s/a?x=1", await bytes("b")),
      requestFingerprint("POST", "https://pay.example.com/api/x402/pay/s/b?x=1", await bytes("b")),
      requestFingerprint("POST", "https://pay.example.com/api/x402/pay/s/a?x=2", await bytes("b")),
      requestFingerprint("POST", "https://pay.example.com/api/x402/pay/s/a?x=1", await bytes("c")),
    ]);
    expect(new Set([base, ...others]).size).toBe(5);
    expect(await requestFingerprint("POST", "https://other.host/api/x402/pay/s/a?x=1", await bytes("b"))).toBe(base);
  });

  it("is sealed: nothing of it in clear, and it opens only for its tenant and payment", async () => {
    const marker = crypto.randomUUID();
    const stored = await sealAnswer(env, "ten_a", "txn_x402_a", answer(marker));
    expect(stored.sealed).toMatch(/^v1\.k1\./);
    expect(stored.sealed).not.toContain(marker);
    const opened = await openAnswer(env, "ten_a", "txn_x402_a", stored.sealed as string);
    expect(new TextDecoder().decode(opened.body as Uint8Array)).toContain(marker);
    await expect(openAnswer(env, "ten_b", "txn_x402_a", stored.sealed as string)).rejects.toThrow(/failed authentication/);
    await expect(openAnswer(env, "ten_a", "txn_x402_b", stored.sealed as string)).rejects.toThrow(/failed authentication/);
  });
});

describe("the answer moves with its payment", () => {
  it("start claims it (no answer); complete stores it, servable for the keep window", async () => {
    const { ref, ok } = await started();
    expect(ok).toBe(true);
    expect(await answerRow(ref.transactionId)).toMatchObject({ answer: null, answered_at: null });
    const kept = await sealAnswer(env, ref.tenantId, ref.transactionId, answer("x"));
    expect(await completePayment(db(), ref, txHash(), outcome, kept)).toBe(true);
    const row = await answerRow(ref.transactionId);
    expect(row).toMatchObject({ answer: kept.sealed, answered_at: kept.at.getTime() });
    expect(row?.expires_at).toBe(kept.at.getTime() + PAID_ANSWER_KEEP_SECONDS * 1000);
    expect(await findKnownPayment(db(), { transactionId: ref.transactionId }, new Date())).toMatchObject({
      status: "COMPLETED",
    });
    // Past its window it is not found, and the hourly cleanup deletes it.
    const later = new Date((row?.expires_at ?? 0) + 1);
    expect(await findKnownPayment(db(), { transactionId: ref.transactionId }, later)).toBeUndefined();
    const output = consoleOutput();
    await worker.scheduled(createScheduledController({ scheduledTime: later.getTime(), cron: "17 * * * *" }), env);
    expect(await answerRow(ref.transactionId)).toBeNull();
    expect(output.at("log").some((l) => l.includes('"task":"paid-answer-cleanup"'))).toBe(true);
  });

  it("leaveUnknown stores it unservable (PENDING); the sweep's complete keeps it and makes it servable", async () => {
    const { ref } = await started();
    const held = await sealAnswer(env, ref.tenantId, ref.transactionId, answer("y"));
    expect(await leavePaymentUnknown(db(), ref, txHash(), held)).toBe(true);
    expect(await findKnownPayment(db(), { transactionId: ref.transactionId }, new Date())).toMatchObject({
      status: "PENDING",
      row: { answer: held.sealed },
    });
    expect(await completePayment(db(), ref, txHash(), { statusCode: null, responseTime: null, settledBy: "sweep" })).toBe(true);
    expect(await findKnownPayment(db(), { transactionId: ref.transactionId }, new Date())).toMatchObject({
      status: "COMPLETED",
      row: { answer: held.sealed },
    });
  });

  it("fail deletes it, kept or held; a fail that lost to a complete deletes nothing, a complete after a fail stores nothing", async () => {
    const unknown = await started();
    await leavePaymentUnknown(
      db(),
      unknown.ref,
      undefined,
      await sealAnswer(env, unknown.ref.tenantId, unknown.ref.transactionId, answer("z")),
    );
    expect(await failPayment(db(), unknown.ref, "expired unused", outcome)).toBe(true);
    expect(await answerRow(unknown.ref.transactionId)).toBeNull();

    const completed = await started();
    const kept = await sealAnswer(env, completed.ref.tenantId, completed.ref.transactionId, answer("k"));
    await completePayment(db(), completed.ref, txHash(), outcome, kept);
    expect(await failPayment(db(), completed.ref, "late", outcome)).toBe(false);
    expect((await answerRow(completed.ref.transactionId))?.answer).toBe(kept.sealed);

    const failed = await started();
    await failPayment(db(), failed.ref, "upstream answered 503", outcome);
    const late = await sealAnswer(env, failed.ref.tenantId, failed.ref.transactionId, answer("l"));
    expect(await completePayment(db(), failed.ref, txHash(), outcome, late)).toBe(false);
    expect(await answerRow(failed.ref.transactionId)).toBeNull();
    expect(await leavePaymentUnknown(db(), failed.ref, txHash(), late)).toBe(false);
    expect(await answerRow(failed.ref.transactionId)).toBeNull();
  });

  it("a retry key pays once: another payment under it is not started (nothing written); the same payment again is a no-op", async () => {
    const key = await paymentRetryKey({ protocol: "x402", payer: address(), paymentId: `pay_${randomHex(16)}` });
    const first = await started({ paymentKey: key });
    expect(first.ok).toBe(true);
    const second = await started({ paymentKey: key, tenant: first.tenant });
    expect(second.ok).toBe(false);
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM transactions WHERE id = ?").bind(second.ref.transactionId).first("n"),
    ).toBe(0);
    expect(await findKnownPayment(db(), { paymentKey: key }, new Date())).toMatchObject({
      row: { transactionId: first.ref.transactionId },
    });
    // Once that payment FAILED (nothing charged), the key is free for a new payment.
    await failPayment(db(), first.ref, "upstream answered 503", outcome);
    expect((await started({ paymentKey: key, tenant: first.tenant })).ok).toBe(true);
  });
});
