// MPP end to end on the local Tempo chain (anvil --network tempo): mppx's client pays the gateway's /api/mpp/pay URL,
// the gateway validates (no broadcast), records, forwards, and broadcasts only after the upstream answered.
import { Challenge, Credential, Receipt } from "mppx";
import { createClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { Actions } from "viem/tempo";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { send } from "../support/client.ts";
import { GATEWAY_ENV, gatewayFetch, history, upstreamRequests, waitFor } from "./support.ts";
import { tempoBalanceOf as balanceOf, tempoChain as chain, mppShop, TEMPO_RPC as RPC, tempo } from "./tempo-support.ts";

let nextBuyer = 0;
/** A fresh funded account per payment (anvil mines one expiring-nonce transaction per account: see tempo.ts). */
const mppBuyer = (mode?: "pull" | "push") => {
  const account = tempo.buyers[nextBuyer++];
  if (!account || nextBuyer >= tempo.buyers.length) throw new Error("out of funded Tempo buyers (the last one is mpp-wiring's)");
  return createMppBuyer({ privateKey: account.privateKey, rpcUrl: RPC, chainId: tempo.chainId, fetch: gatewayFetch, mode });
};

/** A credential for the shop's current challenge, built by mppx's client (nothing is sent in pull mode). */
async function credentialFor(url: string, buyer = mppBuyer()) {
  const challenge = await gatewayFetch(url);
  expect(challenge.status).toBe(402);
  return { buyer, credential: await buyer.mppx.createCredential(challenge) };
}

const pay = (url: string, credential: string) => gatewayFetch(url, { headers: { Authorization: credential } });

describe("MPP: challenge → credential → receipt", () => {
  it("offers pull mode only, bound to this paywall", async () => {
    const shop = await mppShop({ price: "2500" });
    const challenge = Challenge.fromResponse(await gatewayFetch(shop.mpp));
    expect(challenge).toMatchObject({ method: "tempo", intent: "charge" });
    expect(challenge.request).toMatchObject({
      amount: "2500",
      currency: tempo.currency,
      recipient: shop.recipient,
      methodDetails: { chainId: tempo.chainId, supportedModes: ["pull"] },
    });
  }, 60_000); // the first MPP request loads mppx

  it("a paid call returns the upstream body with Payment-Receipt; the recipient gains exactly the price; COMPLETED with the hash", async () => {
    const shop = await mppShop({ price: "12345", route: "/hang/800/echo" });
    const res = await mppBuyer().fetch(`${shop.mpp}?city=Oslo`);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toEqual({ hungMs: 800 });
    const receipt = Receipt.fromResponse(res);
    expect(receipt).toMatchObject({ method: "tempo", status: "success" });
    expect(receipt.reference).toMatch(/^0x[0-9a-f]{64}$/);
    const [received] = await upstreamRequests(shop.prefix);
    expect(received).toMatchObject({ method: "GET", query: "city=Oslo" });
    expect(received?.headers.authorization).toBeUndefined();

    expect(await balanceOf(shop.recipient)).toBe(12_345n);
    const { transactions, events } = await history(shop);
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatchObject({
      status: "COMPLETED",
      protocol: "mpp",
      network: "tempo-testnet",
      amount: "12345",
      // The token it was paid in: pathUSD on the Tempo testnet, not the paywall's USDC.
      currency: "pathUSD",
      txHash: receipt.reference,
    });
    expect(events.map((e) => e.eventType).sort()).toEqual(["REQUEST", "SUCCESS"]);
    expect(events.find((e) => e.eventType === "SUCCESS")?.responseTime).toBeGreaterThanOrEqual(800);
  });
});

describe("MPP: later challenges for the same terms", () => {
  it("are built from the first one (new id and expiry, same request and paywall) and pay the same way", async () => {
    const shop = await mppShop({ price: "3100" });
    const first = Challenge.fromResponse(await gatewayFetch(shop.mpp)); // built by mppx's server
    const { credential } = await credentialFor(shop.mpp); // its challenge is built from the first one
    const later = Credential.deserialize(credential).challenge;
    expect(later.id).not.toBe(first.id);
    expect(later.request).toEqual(first.request);
    expect(later.opaque).toBe(first.opaque);
    const res = await pay(shop.mpp, credential);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(Receipt.fromResponse(res)).toMatchObject({ method: "tempo", status: "success" });
    expect(await balanceOf(shop.recipient)).toBe(3_100n);
  });
});

describe("MPP: a broadcast that fails after the upstream answered", () => {
  it("is recorded FAILED and answered 402 with a fresh challenge and the problem, not the upstream body", async () => {
    const shop = await mppShop({ price: "5000000", route: "/hang/4000/echo" });
    const buyer = mppBuyer();
    const account = privateKeyToAccount(tempo.buyers[nextBuyer - 1]!.privateKey);
    const { credential } = await credentialFor(shop.mpp, buyer);
    const paid = pay(shop.mpp, credential);
    // Validated and recorded; while the upstream works, the buyer spends the money elsewhere (an ordinary transfer).
    await waitFor(async () => (await history(shop)).transactions[0]);
    const wallet = createClient({ account, chain, transport: http(RPC, { retryCount: 0 }) });
    const left = await balanceOf(account.address);
    await Actions.token.transferSync(wallet, {
      token: tempo.currency,
      to: tempo.merchant.address,
      amount: left - 4_000_000n,
      feeToken: tempo.currency,
    });

    const res = await paid;
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("payment-receipt")).toBeNull();
    expect(Challenge.fromResponse(res).method).toBe("tempo");
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    expect(await balanceOf(shop.recipient)).toBe(0n);
    const { transactions, events } = await history(shop);
    expect(transactions[0]).toMatchObject({ status: "FAILED", txHash: null });
    expect(transactions[0]?.failureReason).toMatch(/^settlement failed/);
    expect(events.map((e) => e.eventType).sort()).toEqual(["ERROR", "REQUEST"]);
  });
});

describe("MPP: a credential for other terms is refused and never forwarded", () => {
  /**
   * A transaction signed by mppx's client for changed terms, presented with the shop's genuine challenge (same id, so
   * the memo binding holds): only the check of the transfer itself can refuse it.
   */
  async function tampered(url: string, change: (request: Record<string, unknown>) => void) {
    const res = await gatewayFetch(url);
    const genuine = Challenge.fromResponse(res);
    const changed = structuredClone(genuine);
    change(changed.request as Record<string, unknown>);
    const forged = new Response(null, { status: 402, headers: { "WWW-Authenticate": Challenge.serialize(changed) } });
    const signed = Credential.deserialize(await mppBuyer().mppx.createCredential(forged));
    return Credential.serialize({ ...signed, challenge: genuine });
  }

  it("a smaller amount, another recipient, a credential from another paywall", async () => {
    const shop = await mppShop({ price: "6000" });
    const other = await mppShop({ price: "1" });
    const { credential: cheap } = await credentialFor(other.mpp);
    const credentials = [
      await tampered(shop.mpp, (r) => (r.amount = "1")),
      await tampered(shop.mpp, (r) => (r.recipient = tempo.merchant.address)),
      cheap,
    ];
    for (const credential of credentials) {
      const res = await pay(shop.mpp, credential);
      expect(res.status).toBe(402);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
    }
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect(await balanceOf(shop.recipient)).toBe(0n);
    expect(await balanceOf(other.recipient)).toBe(0n);
    expect((await history(shop)).transactions).toHaveLength(0);
  });

  it("a push-mode credential (a transaction the buyer already broadcast) is refused with a 402", async () => {
    const shop = await mppShop({ price: "7000" });
    const res = await gatewayFetch(shop.mpp);
    const challenge = Challenge.fromResponse(res);
    // mppx's client refuses push for a pull-only challenge; pay the same challenge id in push mode by hand.
    const { methodDetails, ...request } = challenge.request as Record<string, unknown> & { methodDetails: object };
    const pushable = {
      ...challenge,
      request: { ...request, methodDetails: { ...methodDetails, supportedModes: ["push", "pull"] } },
    };
    const pushed = await mppBuyer("push").mppx.createCredential(
      new Response(null, { status: 402, headers: { "WWW-Authenticate": Challenge.serialize(pushable as never) } }),
    );
    const paid = Credential.deserialize(pushed);
    expect(paid.payload).toMatchObject({ type: "hash" });
    expect(await balanceOf(shop.recipient)).toBe(7000n); // the buyer's own broadcast moved the money
    const credential = Credential.serialize({ ...paid, challenge });
    const refused = await pay(shop.mpp, credential);
    expect(refused.status).toBe(402);
    expect((await refused.json()) as { detail?: string }).toMatchObject({ detail: expect.stringMatching(/push/i) });
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toHaveLength(0);
  });
});

describe("MPP: the Tempo RPC unreachable", () => {
  it("is a 502 in the envelope, not a 402: nothing recorded, forwarded or charged", async () => {
    const shop = await mppShop({ price: "1000" });
    const { credential } = await credentialFor(shop.mpp);
    const unreachable = {
      ...GATEWAY_ENV,
      NETWORK_OVERRIDES: JSON.stringify({ "tempo-testnet": { rpcUrl: "https://nowhere.gateway.test" } }),
    } as Partial<Env>;
    const res = await send(new Request(shop.mpp, { headers: { Authorization: credential } }), unreachable);
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: "BAD_GATEWAY", meta: { requestId: expect.any(String) } });
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toHaveLength(0);
    expect(await balanceOf(shop.recipient)).toBe(0n);
  });
});

describe("MPP: SIGNED_URL", () => {
  it("broadcasts, then hands out a single-use URL with the Payment-Receipt", async () => {
    const shop = await mppShop({ price: "800", paywall: { fulfillmentMode: "SIGNED_URL" } });
    const res = await mppBuyer().fetch(shop.mpp);
    expect(res.status).toBe(200);
    expect(Receipt.fromResponse(res)).toMatchObject({ status: "success" });
    const { data } = (await res.json()) as { data: { url: string } };
    expect(await balanceOf(shop.recipient)).toBe(800n);
    expect((await gatewayFetch(data.url)).status).toBe(200);
    expect((await gatewayFetch(data.url)).status).toBe(404);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });
});
