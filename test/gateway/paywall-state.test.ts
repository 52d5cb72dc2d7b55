// The paywall state a payment URL is answered with, kept per isolate for PAYWALL_STATE_TTL_MS (docs/scale.md, "Reads
// on the paid path"): after warm-up a payment request reads nothing of its paywall from D1, and a change written
// elsewhere is honoured within that bound. D1 statements are counted as the bench counts them (SERVER_TIMING=on).
import { env } from "cloudflare:workers";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { describe, expect, it } from "vitest";
import { createX402Buyer } from "../../src/cli/localnet/buyer.ts";
import { api, send } from "../support/client.ts";
import { balanceOf, GATEWAY_ENV, history, net, openShop, upstreamRequests } from "./support.ts";

/** The bound these tests hold the gateway to; the suites' default is 0 (every request reads its state). */
const TTL_MS = 1000;
const KEPT = { ...GATEWAY_ENV, SERVER_TIMING: "on", PAYWALL_STATE_TTL_MS: String(TTL_MS) } as Partial<Env>;
/** The same Worker reading the state on every request. */
const FRESH = { ...GATEWAY_ENV, SERVER_TIMING: "on", PAYWALL_STATE_TTL_MS: "0" } as Partial<Env>;

const fetchWith = (overrides: Partial<Env>) => (input: RequestInfo | URL, init?: RequestInit) =>
  send(new Request(input, init), overrides);
const kept = fetchWith(KEPT);

const statementsOf = (res: Response) => {
  const n = /d1;desc="statements=(\d+)"/.exec(res.headers.get("Server-Timing") ?? "")?.[1];
  expect(n, "a Server-Timing d1 entry").toBeDefined();
  return Number(n);
};

/** A fresh x402 payment for the URL's current terms (its own challenge read through `fetch`). */
async function signed(url: string, fetch = kept) {
  const b = createX402Buyer({ privateKey: net.buyer.privateKey, network: net.network, usdc: net.usdc.address, fetch });
  const challenge = await fetch(url);
  expect(challenge.status).toBe(402);
  const required = b.http.getPaymentRequiredResponse((name) => challenge.headers.get(name), await challenge.json());
  const payload = await b.http.createPaymentPayload(required);
  return { required, header: b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string };
}

const amountOf = async (res: Response) =>
  decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string).accepts.map((a) => a.amount);

/** Polls the URL's challenge until `done` holds; the time it took from `since`. */
async function honouredAfter(url: string, since: number, done: (res: Response) => Promise<boolean>): Promise<number> {
  for (;;) {
    const res = await kept(url);
    if (await done(res)) return Date.now() - since;
    if (Date.now() - since > TTL_MS * 5) throw new Error(`not honoured ${TTL_MS * 5} ms after the change`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a payment URL's paywall, kept per isolate", () => {
  it("after warm-up, a challenge makes no D1 statement and a paid request no paywall read", async () => {
    const shop = await openShop({ price: "1000" });
    expect((await kept(shop.x402)).status).toBe(402); // warm-up: the state and the row read, kept
    const challenge = await kept(shop.x402);
    expect(challenge.status).toBe(402);
    expect(statementsOf(challenge)).toBe(0);

    // The same paid request, with the state kept and read afresh: the difference is the state's one read.
    const a = await signed(shop.x402);
    const paidKept = await kept(shop.x402, { headers: { "PAYMENT-SIGNATURE": a.header } });
    expect(paidKept.status, await paidKept.clone().text()).toBe(200);
    const b = await signed(shop.x402);
    const paidFresh = await fetchWith(FRESH)(shop.x402, { headers: { "PAYMENT-SIGNATURE": b.header } });
    expect(paidFresh.status).toBe(200);
    expect(statementsOf(paidFresh) - statementsOf(paidKept)).toBe(1);
  });

  it(`a paywall disabled outside the API takes no payment ${TTL_MS} ms later`, async () => {
    const shop = await openShop({ price: "1000" });
    const payment = await signed(shop.x402); // the state is kept
    const at = Date.now();
    await env.DB.prepare("UPDATE paywalls SET enabled = 0 WHERE id = ?").bind(shop.paywallId).run();
    const lag = await honouredAfter(shop.x402, at, async (res) => res.status === 404);
    expect(lag).toBeLessThanOrEqual(TTL_MS + 250);

    const paid = await kept(shop.x402, { headers: { "PAYMENT-SIGNATURE": payment.header } });
    expect(paid.status).toBe(404);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toHaveLength(0);
  });

  it(`a price changed outside the API is the only price taken ${TTL_MS} ms later`, async () => {
    const shop = await openShop({ price: "1000" });
    const old = await signed(shop.x402);
    expect(old.required.accepts[0]?.amount).toBe("1000");
    const at = Date.now();
    await env.DB.prepare("UPDATE paywalls SET price = '2000' WHERE id = ?").bind(shop.paywallId).run();
    const lag = await honouredAfter(shop.x402, at, async (res) => (await amountOf(res))[0] === "2000");
    expect(lag).toBeLessThanOrEqual(TTL_MS + 250);

    const res = await kept(shop.x402, { headers: { "PAYMENT-SIGNATURE": old.header } });
    expect(res.status).toBe(402);
    expect(await amountOf(res)).toEqual(["2000"]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });

  it("a change through this isolate's API is honoured at once", async () => {
    const shop = await openShop({ price: "1000" });
    expect((await kept(shop.x402)).status).toBe(402);
    const patched = await api(`/v1/paywalls/${shop.paywallId}`, {
      key: shop.actor.key,
      method: "PATCH",
      body: { price: "3000" },
      env: KEPT,
    });
    expect(patched.status, patched.text).toBe(200);
    expect(await amountOf(await kept(shop.x402))).toEqual(["3000"]);
  });
});
