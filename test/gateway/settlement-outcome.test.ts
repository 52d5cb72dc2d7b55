// x402 settlements whose answer is lost (the facilitator settled, or not, and the gateway never heard): the gateway
// asks the token (EIP-3009 `authorizationState`) instead of telling a buyer who may have paid to pay again, and the
// Cron sweep settles what stays PENDING. Faults are the outbound router's (test/localnet/outbound.ts): the real
// facilitator settles on the real chain behind `answer-lost.` and settles nothing behind `send-dropped.`.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { describe, expect, it } from "vitest";
import { EXPIRY_MARGIN_MS } from "../../src/gateway/chain-outcome.ts";
import { PAYMENT_SWEEP_CRON, SWEEP_MIN_AGE_MS } from "../../src/gateway/reconcile.ts";
import worker from "../../src/index.ts";
import { paymentResponseOf } from "../localnet/buyer.ts";
import { send } from "../support/client.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  history,
  openShop,
  receiptOf,
  settlementsOf,
  signedPayment,
  upstreamRequests,
} from "./support.ts";

/** The gateway with its testnet facilitator behind a fault of the outbound router. */
const payThrough = (fault: "answer-lost" | "send-dropped", url: string, header: string) =>
  send(new Request(url, { headers: { "PAYMENT-SIGNATURE": header } }), {
    ...GATEWAY_ENV,
    FACILITATOR_URL_TESTNET: FACILITATOR.replace("https://", `https://${fault}.`),
  } as Partial<Env>);

const sweepAt = (at: number) => worker.scheduled(createScheduledController({ scheduledTime: at, cron: PAYMENT_SWEEP_CRON }), env);

const pendingRows = async (transactionId: string) =>
  (await env.DB.prepare("SELECT reference FROM pending_payments WHERE transaction_id = ?").bind(transactionId).all()).results;

describe("the facilitator settled, then its answer was lost", () => {
  it("the token says the authorization was used: the buyer gets the upstream's answer, COMPLETED with the transfer's hash", async () => {
    const shop = await openShop({ price: "7100" });
    const { header, nonce } = await signedPayment(shop.x402);
    const res = await payThrough("answer-lost", shop.x402, header);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ path: `${shop.prefix}/echo` });
    const [settled] = await settlementsOf(nonce);
    expect(settled?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(paymentResponseOf(res)).toMatchObject({ success: true, transaction: settled?.transaction });
    expect(await balanceOf(shop.merchant)).toBe(7100n);
    const { transactions, events } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: settled?.transaction })]);
    expect((await receiptOf(settled?.transaction as `0x${string}`)).status).toBe("success");
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(await pendingRows(transactions[0]!.id)).toEqual([]);
  });
});

describe("the settlement was never made, and its answer was lost", () => {
  it("unused and still valid: 502 PAYMENT_OUTCOME_UNKNOWN with the transaction id (never a new 402); PENDING until the sweep sees it used", async () => {
    const shop = await openShop({ price: "7200" });
    const { header, nonce, payload, required } = await signedPayment(shop.x402);
    const res = await payThrough("send-dropped", shop.x402, header);
    expect(res.status).toBe(502);
    expect(res.headers.get("PAYMENT-REQUIRED")).toBeNull();
    const body = (await res.json()) as { code: string; error: string; details: { transactionId: string } };
    expect(body).toMatchObject({ code: "PAYMENT_OUTCOME_UNKNOWN", meta: { requestId: expect.stringMatching(/^req_/) } });
    expect(body.error).toMatch(/do not pay again/i);
    expect(await settlementsOf(nonce)).toHaveLength(0);
    let { transactions, events } = await history(shop);
    expect(transactions).toEqual([expect.objectContaining({ id: body.details.transactionId, status: "PENDING", txHash: null })]);
    expect(events.map((e) => e.eventType)).toEqual(["REQUEST"]);

    // A sweep while the authorization is unused and valid leaves it PENDING.
    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "PENDING" });

    // Whoever holds the authorization submits it (it was sent once and may still land): the sweep sees it used.
    const direct = await new HTTPFacilitatorClient({ url: FACILITATOR }).settle(payload, required.accepts[0]!);
    expect(direct.success).toBe(true);
    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    ({ transactions, events } = await history(shop));
    expect(transactions[0]).toMatchObject({ status: "COMPLETED", txHash: direct.transaction });
    expect(events.find((e) => e.eventType === "SUCCESS")).toMatchObject({ amount: "7200", metadata: { settledBy: "sweep" } });
    expect(await balanceOf(shop.merchant)).toBe(7200n);
    expect(await pendingRows(body.details.transactionId)).toEqual([]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("unused past validBefore: the sweep records FAILED with the reason and an ERROR event; nothing moved", async () => {
    const shop = await openShop({ price: "7300" });
    const { header, payload } = await signedPayment(shop.x402);
    expect((await payThrough("send-dropped", shop.x402, header)).status).toBe(502);
    const validBefore = Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore) * 1000;
    await sweepAt(validBefore + EXPIRY_MARGIN_MS + 1_000);
    const { transactions, events } = await history(shop);
    expect(transactions[0]).toMatchObject({ status: "FAILED", failureReason: "the payment's authorization expired unused" });
    expect(events.find((e) => e.eventType === "ERROR")).toMatchObject({ metadata: { settledBy: "sweep" } });
    expect(await balanceOf(shop.merchant)).toBe(0n);
    expect(await pendingRows(transactions[0]!.id)).toEqual([]);
  });
});

describe("the sweep and a PENDING row nobody settled", () => {
  it("a payment recorded PENDING whose request ended before settling: FAILED once its authorization expired unused", async () => {
    const shop = await openShop({ price: "7400", route: "/status/500" });
    const { header, payload } = await signedPayment(shop.x402);
    // A 5xx ends FAILED at once; put the row back to PENDING as an invocation cut off mid-way would leave it.
    expect((await payThrough("send-dropped", shop.x402, header)).status).toBe(500);
    const [row] = (await history(shop)).transactions;
    await env.DB.batch([
      env.DB.prepare("UPDATE transactions SET status = 'PENDING', failure_reason = NULL, settled_at = NULL WHERE id = ?").bind(
        row!.id,
      ),
      env.DB.prepare("DELETE FROM events WHERE event_type = 'ERROR' AND paywall_id = ?").bind(shop.paywallId),
      env.DB.prepare(
        "INSERT INTO pending_payments (transaction_id, tenant_id, reference, valid_before, created_at) VALUES (?, ?, ?, ?, ?)",
      ).bind(
        row!.id,
        shop.actor.tenant.id,
        (payload.payload as { authorization: { nonce: string } }).authorization.nonce,
        Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore) * 1000,
        Date.now(),
      ),
    ]);
    await sweepAt(Date.now() + SWEEP_MIN_AGE_MS + 1_000);
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "PENDING" });
    await sweepAt(Date.now() + 3_600_000);
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "FAILED" });
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});
