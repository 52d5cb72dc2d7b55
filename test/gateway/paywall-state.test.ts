// The paywall a payment URL is answered with, kept per isolate until its tenant's version moves in the version map,
// read once per PAYWALL_STATE_TTL_MS (docs/scale.md, "Reads on the paid path"): after warm-up a payment request reads
// nothing of its paywall from D1, and a change written elsewhere is honoured within that bound. D1 statements are counted as the bench counts them (SERVER_TIMING=on).
import { env } from "cloudflare:workers";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { Challenge } from "mppx";
import { describe, expect, it } from "vitest";
import { createX402Buyer } from "../../src/cli/localnet/buyer.ts";
import { api, send } from "../support/client.ts";
import { balanceOf, GATEWAY_ENV, history, net, openShop, upstreamRequests } from "./support.ts";
import { setTempoWallet } from "./tempo-support.ts";

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

/** Polls the URL's challenge until `done` holds; when the request that saw it was sent, counted from `since`. */
async function honouredAfter(url: string, since: number, done: (res: Response) => Promise<boolean>): Promise<number> {
  for (;;) {
    const sent = Date.now();
    const res = await kept(url);
    if (await done(res)) return sent - since;
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

  it("a paywall seen less often than the bound reads nothing of its own: one read of the map serves every kept one", async () => {
    const shops = [await openShop({ price: "1000" }), await openShop({ price: "2000" }), await openShop({ price: "3000" })];
    for (const shop of shops) expect((await kept(shop.x402)).status).toBe(402); // each read once, kept
    await new Promise((r) => setTimeout(r, TTL_MS + 100));
    const [first, ...rest] = await Promise.all(shops.map(async (shop) => kept(shop.x402)));
    // The first after the bound reads the map (the tenants moved since: none of these); the others share that read.
    expect(statementsOf(first as Response)).toBeLessThanOrEqual(1);
    expect(rest.map(statementsOf).reduce((a, b) => a + b, 0) + statementsOf(first as Response)).toBe(1);
    expect(await Promise.all([first as Response, ...rest].map(amountOf))).toEqual([["1000"], ["2000"], ["3000"]]);

    // Past the bound again, one by one: the map once, then nothing.
    await new Promise((r) => setTimeout(r, TTL_MS + 100));
    expect(statementsOf(await kept(shops[2]?.x402 as string))).toBe(1);
    expect(statementsOf(await kept(shops[1]?.x402 as string))).toBe(0);
    expect(statementsOf(await kept(shops[0]?.x402 as string))).toBe(0);
  });

  it(`a wallet changed outside the API is the only recipient named ${TTL_MS} ms later`, { timeout: TTL_MS * 10 }, async () => {
    const shop = await openShop({ networks: ["tempo-testnet"], price: "1000" });
    const recipientOf = async (res: Response) => (res.status === 402 ? Challenge.fromResponse(res).request.recipient : undefined);
    const before = await setTempoWallet(shop.actor.tenant.id);
    await honouredAfter(shop.mpp as string, Date.now(), async (res) => (await recipientOf(res)) === before); // kept
    const at = Date.now();
    const after = await setTempoWallet(shop.actor.tenant.id);
    const lag = await honouredAfter(shop.mpp as string, at, async (res) => (await recipientOf(res)) === after);
    expect(lag).toBeLessThanOrEqual(TTL_MS + 250);
  });

  it(`a tenant deleted outside the API takes no payment ${TTL_MS} ms later`, { timeout: TTL_MS * 10 }, async () => {
    const shop = await openShop({ price: "1000" });
    const payment = await signed(shop.x402); // the paywall is kept
    const at = Date.now();
    await env.DB.prepare("DELETE FROM tenants WHERE id = ?").bind(shop.actor.tenant.id).run();
    const lag = await honouredAfter(shop.x402, at, async (res) => res.status === 404);
    expect(lag).toBeLessThanOrEqual(TTL_MS + 250);

    const paid = await kept(shop.x402, { headers: { "PAYMENT-SIGNATURE": payment.header } });
    expect(paid.status).toBe(404);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
  });
});
