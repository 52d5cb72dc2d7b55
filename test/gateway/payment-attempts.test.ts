// The per-address limit on refused payment attempts (PAYMENT_REFUSAL_LIMIT per window): every credential costs a
// verification (a facilitator /verify, an eth_call on the Tempo RPC), so an address whose payments keep being
// refused gets 429 before anything is verified. Payments that verify never count; challenges are never limited.

import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { send } from "../support/client.ts";
import { FACILITATOR, GATEWAY_ENV, gatewayFetch, history, net, openShop, signedPayment, upstreamRequests } from "./support.ts";
import { setTempoWallet } from "./tempo-support.ts";

const LIMITED = { ...GATEWAY_ENV, PAYMENT_REFUSAL_LIMIT: "3" } as Partial<Env>;
let n = 0;
/** A client address of its own per test (each has its own bucket). */
const address = () => `198.51.100.${++n}`;

const pay = (url: string, ip: string, header?: string) =>
  send(new Request(url, { headers: { "CF-Connecting-IP": ip, ...(header ? { "PAYMENT-SIGNATURE": header } : {}) } }), LIMITED);

const NOT_A_PAYMENT = "bm90IGEgcGF5bWVudA==";

async function verificationsOf(nonce: string): Promise<number> {
  const log = (await (await fetch(`${FACILITATOR}/__facilitator/log`)).json()) as { endpoint: string; nonce?: string }[];
  return log.filter((e) => e.endpoint === "verify" && e.nonce?.toLowerCase() === nonce.toLowerCase()).length;
}

describe("refused payment attempts per client address", () => {
  it("over the limit: 429 in the envelope with Retry-After, then 429 before any verification, even for a signed payment", async () => {
    const shop = await openShop({ price: "1100" });
    const ip = address();
    for (let i = 0; i < 3; i++) expect((await pay(shop.x402, ip, NOT_A_PAYMENT)).status).toBe(402);
    const limited = await pay(shop.x402, ip, NOT_A_PAYMENT);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ code: "RATE_LIMITED", meta: { requestId: expect.stringMatching(/^req_/) } });

    // The address's next payment is answered from memory: not verified, not recorded, not forwarded.
    const { header, nonce } = await signedPayment(shop.x402);
    expect((await pay(shop.x402, ip, header)).status).toBe(429);
    expect(await verificationsOf(nonce)).toBe(0);
    expect((await history(shop)).transactions).toHaveLength(0);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);

    // Challenges stay open to it, and another address pays as usual.
    const challenge = await pay(shop.x402, ip);
    expect(challenge.status).toBe(402);
    expect(challenge.headers.get("PAYMENT-REQUIRED")).toBeTruthy();
    expect((await pay(shop.x402, address(), header)).status).toBe(200);
    expect(await verificationsOf(nonce)).toBe(1);
  });

  it("a payment presented for another request counts; its resends and payments that verify never count", async () => {
    const shop = await openShop({ price: "1200" });
    const ip = address();
    for (let i = 0; i < 4; i++) {
      const { header } = await signedPayment(shop.x402);
      expect((await pay(shop.x402, ip, header)).status).toBe(200);
    }
    const { header } = await signedPayment(shop.x402);
    expect((await pay(shop.x402, ip, header)).status).toBe(200);
    // Sent again for the same request: its answer, never a refusal.
    for (let i = 0; i < 4; i++) expect((await pay(shop.x402, ip, header)).status).toBe(200);
    // Three presentations for other requests reach the limit; the fourth is over it.
    for (let i = 0; i < 3; i++) expect((await pay(`${shop.x402}?other=${i}`, ip, header)).status).toBe(409);
    expect((await pay(`${shop.x402}?other=3`, ip, header)).status).toBe(429);
    expect((await history(shop)).transactions).toHaveLength(5);
  });
});

describe("refused MPP payment attempts", () => {
  it("count against the same address; over the limit, a genuine credential gets 429 before mppx validates it", async () => {
    const shop = await openShop({ networks: ["tempo-testnet"], price: "1300" });
    await setTempoWallet(shop.actor.tenant.id, net.tempo!.merchant.address);
    const url = shop.mpp as string;
    const ip = address();
    const payMpp = (authorization: string) =>
      send(new Request(url, { headers: { "CF-Connecting-IP": ip, Authorization: authorization } }), LIMITED);
    for (let i = 0; i < 3; i++) expect((await payMpp("Payment not-a-credential")).status).toBe(402);
    const limited = await payMpp("Payment not-a-credential");
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ code: "RATE_LIMITED" });

    const buyer = createMppBuyer({
      privateKey: net.tempo!.buyers[0]!.privateKey,
      rpcUrl: "https://tempo-rpc.gateway.test",
      chainId: net.tempo!.chainId,
      fetch: gatewayFetch,
    });
    const credential = await buyer.mppx.createCredential(await gatewayFetch(url));
    expect((await payMpp(credential)).status).toBe(429);
    expect((await history(shop)).transactions).toHaveLength(0);
    expect((await send(new Request(url, { headers: { "CF-Connecting-IP": ip } }), LIMITED)).status).toBe(402);
  }, 60_000); // the first MPP request loads mppx
});
