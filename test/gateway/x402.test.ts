// x402 end to end on the local chain: the Worker answers payment URLs, the local facilitator verifies and settles,
// the upstream stub records what it received, and the chain shows who was paid.

import { x402Client, x402HTTPClient } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { describe, expect, it } from "vitest";
import { paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import {
  balanceOf,
  buyer,
  FACILITATOR,
  gatewayFetch,
  history,
  net,
  openShop,
  receiptOf,
  settlementsOf,
  signedPayment,
  upstreamRequests,
  waitFor,
} from "./support.ts";

describe("the x402 challenge", () => {
  it("is a 402 with PAYMENT-REQUIRED that the standard's client decodes: one exact requirement per EVM network", async () => {
    const shop = await openShop({ price: "250000", networks: ["base-sepolia", "arc-testnet", "tempo-testnet"] });
    const res = await gatewayFetch(shop.x402);
    expect(res.status).toBe(402);
    const required = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((n) => res.headers.get(n), await res.json());
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(shop.x402);
    expect(required.accepts).toEqual([
      {
        scheme: "exact",
        network: "eip155:84532",
        amount: "250000",
        asset: net.usdc.address,
        payTo: shop.merchant,
        maxTimeoutSeconds: 300,
        extra: { name: "USDC", version: "2" },
      },
      {
        scheme: "exact",
        network: "eip155:5042002",
        amount: "250000",
        asset: "0x3600000000000000000000000000000000000000",
        payTo: shop.merchant,
        maxTimeoutSeconds: 300,
        extra: { name: "USDC", version: "2" },
      },
    ]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
  });
});

describe("a paid call", () => {
  it("returns the upstream's answer, pays the merchant exactly the price, and records PENDING → COMPLETED with the real hash", async () => {
    const shop = await openShop({ price: "1234", route: "/hang/4000/echo" });
    const b = buyer();
    const before = await balanceOf(net.buyer.address);
    const pending = b.fetch(`${shop.x402}?city=Oslo`);
    // While the upstream works, the payment is recorded and not yet settled.
    const whileWaiting = await waitFor(async () => (await history(shop)).transactions[0]);
    expect(whileWaiting).toMatchObject({ status: "PENDING", txHash: null, amount: "1234" });
    expect(await balanceOf(shop.merchant)).toBe(0n);

    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hungMs: 4000 });
    const [received] = await upstreamRequests(shop.prefix);
    expect(received).toMatchObject({ method: "GET", path: `${shop.prefix}/hang/4000/echo`, query: "city=Oslo" });
    const settled = paymentResponseOf(res);
    expect(settled).toMatchObject({ success: true, network: net.network });
    expect((await receiptOf(settled!.transaction as `0x${string}`)).status).toBe("success");

    expect(await balanceOf(shop.merchant)).toBe(1234n);
    expect(before - (await balanceOf(net.buyer.address))).toBeGreaterThanOrEqual(1234n);
    const { transactions, events } = await history(shop);
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatchObject({
      status: "COMPLETED",
      txHash: settled!.transaction,
      amount: "1234",
      protocol: "x402",
      network: "base-sepolia",
      payerAddress: b.address,
    });
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(events.find((e) => e.eventType === "SUCCESS")).toMatchObject({ statusCode: 200, amount: "1234" });
    expect(events.find((e) => e.eventType === "SUCCESS")?.responseTime).toBeGreaterThanOrEqual(1500);
  });
});

/**
 * A payment signed for the shop's terms as `change` alters them, claiming the shop's own terms in `accepted` (which
 * the signature does not cover); with its authorization nonce.
 */
async function signedFor(shop: { x402: string }, change: (r: Record<string, unknown>) => void) {
  const b = buyer();
  const challenge = await gatewayFetch(shop.x402);
  const required = b.http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
  const original = structuredClone(required.accepts[0]!);
  change(required.accepts[0] as unknown as Record<string, unknown>);
  const payload = await b.http.createPaymentPayload(required);
  payload.accepted = original;
  const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce;
  return { header: b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string, nonce };
}

/** A payment of the shop's terms whose authorization is valid for `seconds` only. */
const expiringIn = (shop: { x402: string }, seconds: number) => signedFor(shop, (r) => (r.maxTimeoutSeconds = seconds));

describe("a payment's expiry bounds the upstream call: the gateway never forwards what it could not then settle", () => {
  it("a payment expiring before the upstream could answer and the payment settle: 402, nothing forwarded or recorded", async () => {
    const shop = await openShop({ price: "6100" });
    const { header } = await expiringIn(shop, 20); // 20 s < the 30 s kept to settle
    const res = await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(res.status).toBe(402);
    const required = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((n) => res.headers.get(n), {});
    expect(required.error).toMatch(/expires too soon/);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("the upstream gets only the time the payment leaves (here ≈3 s of a 60 s paywall timeout): 504, FAILED, no transfer", async () => {
    const shop = await openShop({ price: "6200", route: "/hang/8000/echo" });
    const { header, nonce } = await expiringIn(shop, 33);
    const started = Date.now();
    const res = await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(res.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(7_000);
    expect(await settlementsOf(nonce)).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
    expect((await history(shop)).transactions[0]).toMatchObject({
      status: "FAILED",
      failureReason: expect.stringMatching(/^upstream timed out after [1-3][0-9]{3} ms$/),
    });
  });
});

describe("verification refuses a payment for other terms, and nothing is forwarded", () => {
  const cases: [string, (r: Record<string, unknown>) => void][] = [
    ["a smaller amount", (r) => (r.amount = "1")],
    ["another payTo", (r) => (r.payTo = net.merchant.address)],
    ["an expired authorization", (r) => (r.maxTimeoutSeconds = -700)],
  ];
  for (const [name, change] of cases) {
    it(name, async () => {
      const shop = await openShop({ price: "6000" });
      const res = await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": (await signedFor(shop, change)).header } });
      expect(res.status).toBe(402);
      const required = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((n) => res.headers.get(n), {});
      expect(required.error).toBeTruthy();
      expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
      expect(await balanceOf(shop.merchant)).toBe(0n);
      expect((await history(shop)).transactions).toHaveLength(0);
    });
  }

  it("a payment whose accepted terms say the smaller amount it signed for", async () => {
    const shop = await openShop({ price: "6000" });
    const b = buyer();
    const challenge = await gatewayFetch(shop.x402);
    const required = b.http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
    required.accepts[0]!.amount = "1";
    const payload = await b.http.createPaymentPayload(required);
    const header = b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string;
    const res = await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(res.status).toBe(402);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("a payment on a network the paywall does not accept", async () => {
    const shop = await openShop({ price: "6000" });
    const { payload, b } = await signedPayment(shop.x402);
    payload.accepted = { ...payload.accepted, network: "eip155:8453" };
    const header = b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string;
    const res = await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(res.status).toBe(402);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("a PAYMENT-SIGNATURE that is not a payment", async () => {
    const shop = await openShop();
    const res = await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": "bm90IGEgcGF5bWVudA==" } });
    expect(res.status).toBe(402);
    expect(decodePaymentResponseHeader).toBeTypeOf("function");
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
  });
});

describe("a settlement that fails after the upstream answered", () => {
  it("the same authorization was submitted first, to this merchant: the token says used, COMPLETED with that transfer", async () => {
    const shop = await openShop({ price: "900", route: "/hang/4000/echo" });
    const { header, payload, required } = await signedPayment(shop.x402);
    const paid = gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": header } });
    await waitFor(async () => (await history(shop)).transactions[0]);
    // Someone else submits the same authorization first, while the upstream works: the merchant is paid by it.
    const direct = await new HTTPFacilitatorClient({ url: FACILITATOR }).settle(payload, required.accepts[0]!);
    expect(direct.success).toBe(true);

    // The gateway's own settlement is refused (nonce used); the token shows the transfer to the merchant.
    const res = await paid;
    expect(res.status).toBe(200);
    const header200 = res.headers.get("PAYMENT-RESPONSE");
    expect(header200 && decodePaymentResponseHeader(header200)).toMatchObject({ success: true, transaction: direct.transaction });
    const { transactions, events } = await history(shop);
    expect(transactions[0]).toMatchObject({ status: "COMPLETED", txHash: direct.transaction });
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(await balanceOf(shop.merchant)).toBe(900n);
  });
});
