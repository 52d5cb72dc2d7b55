import { env } from "cloudflare:workers";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { Challenge } from "mppx";
import { describe, expect, it } from "vitest";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { api } from "../support/client.ts";
import { balanceOf, gatewayFetch, history, net, openShop, signedPayment, upstreamRequests } from "./support.ts";
import { mppShop, setTempoWallet, TEMPO_RPC, tempo, tempoBalanceOf } from "./tempo-support.ts";

const challengeOf = async (url: string, init?: RequestInit) => {
  const res = await gatewayFetch(url, init);
  expect(res.status).toBe(402);
  return decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string);
};

type Shop = Awaited<ReturnType<typeof openShop>>;

const patch = async (shop: Shop, body: Record<string, unknown>) => {
  const res = await api(`/v1/paywalls/${shop.paywallId}`, { key: shop.actor.key, method: "PATCH", body });
  expect(res.status, res.text).toBe(200);
};

/** A price written with plain SQL, as no API call would: only the database's triggers see it. */
const setPrice = (paywallId: string, price: string) =>
  env.DB.prepare("UPDATE paywalls SET price = ? WHERE id = ?").bind(price, paywallId).run();

describe("the x402 challenge after the paywall changed", () => {
  // The gateway keeps a paywall's terms per state, named by versions the database's triggers move (migrations/0007):
  // a price written by any path is the price of the next challenge, and the only price a payment is accepted at.
  it.each([
    { how: "through the API", change: (shop: Shop, price: string) => patch(shop, { price }) },
    { how: "in the database, not through the API", change: (shop: Shop, price: string) => setPrice(shop.paywallId, price) },
  ])(
    "a price changed $how is named at once; a payment signed for the old price is refused without a charge",
    async ({ change }) => {
      const shop = await openShop({ price: "1000" });
      const old = await signedPayment(shop.x402); // the challenge at 1000 is now built (and kept)
      expect(old.required.accepts[0]?.amount).toBe("1000");

      await change(shop, "2000");
      const next = await challengeOf(shop.x402);
      expect(next.accepts.map((a) => a.amount)).toEqual(["2000"]);

      const res = await gatewayFetch(shop.x402, { headers: { "PAYMENT-SIGNATURE": old.header } });
      expect(res.status).toBe(402);
      const refusal = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string);
      expect(refusal.error).toMatch(/matches none/);
      expect(refusal.accepts.map((a) => a.amount)).toEqual(["2000"]);
      expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
      expect((await history(shop)).transactions).toHaveLength(0);
      expect(await balanceOf(shop.merchant)).toBe(0n);
    },
  );

  it("names the new networks and description at once", async () => {
    const shop = await openShop({ price: "1000" });
    expect((await challengeOf(shop.x402)).accepts.map((a) => a.network)).toEqual(["eip155:84532"]);
    await patch(shop, { networks: ["base-sepolia", "arc-testnet"], description: "Now on Arc too" });
    const next = await challengeOf(shop.x402);
    expect(next.accepts.map((a) => a.network)).toEqual(["eip155:84532", "eip155:5042002"]);
    expect(next.resource.description).toBe("Now on Arc too");
    expect(next.accepts[0]).toMatchObject({ amount: "1000", asset: net.usdc.address, payTo: shop.merchant });
  });

  it("is its own for each paywall: two paywalls of one tenant with the same terms name their own URLs", async () => {
    const shop = await openShop({ price: "1000", paywall: { name: "Twin", description: "Same terms" } });
    const twin = await api("/v1/paywalls", {
      key: shop.actor.key,
      method: "POST",
      body: {
        slug: `${shop.slug}-twin`,
        name: "Twin",
        description: "Same terms",
        targetType: "ROUTE",
        targetRoute: "/echo",
        serviceId: shop.serviceId,
        price: "1000",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
      },
    });
    expect(twin.status, twin.text).toBe(201);
    const twinUrl = twin.body.data.paymentUrls.x402 as string;
    const [first, second] = [await challengeOf(shop.x402), await challengeOf(twinUrl)];
    expect(first.accepts).toEqual(second.accepts);
    expect([first.resource.url, second.resource.url]).toEqual([shop.x402, twinUrl]);
  });
});

describe("the plain challenge and the refusals", () => {
  it("a refusal's error is never in the next plain challenge, and the plain one never hides a refusal's error", async () => {
    const shop = await openShop({ price: "1000" });
    const bad = { headers: { "PAYMENT-SIGNATURE": "not a payment" } };
    expect((await challengeOf(shop.x402)).error).toBeUndefined();
    expect((await challengeOf(shop.x402, bad)).error).toMatch(/not a valid x402 payment/);
    expect((await challengeOf(shop.x402)).error).toBeUndefined();

    const other = await openShop({ price: "1000" });
    expect((await challengeOf(other.x402, bad)).error).toMatch(/not a valid x402 payment/);
    expect((await challengeOf(other.x402)).error).toBeUndefined();
  });
});

describe("the MPP challenge after the paywall or its tenant changed", () => {
  const mppChallengeOf = async (url: string) => {
    const res = await gatewayFetch(url);
    expect(res.status).toBe(402);
    return Challenge.fromResponse(res);
  };

  it("names the new price, description and recipient at once, and its own paywall", async () => {
    const shop = await openShop({ networks: ["tempo-testnet"], price: "1000", paywall: { description: "First" } });
    const mpp = shop.mpp as string;
    const firstRecipient = await setTempoWallet(shop.actor.tenant.id);
    const first = await mppChallengeOf(mpp);
    expect(first.request).toMatchObject({ amount: "1000", recipient: firstRecipient });
    expect(first.description).toBe("First");

    await patch(shop, { price: "2000", description: "Second" });
    const recipient = await setTempoWallet(shop.actor.tenant.id);
    const next = await mppChallengeOf(mpp);
    expect(next.request).toMatchObject({ amount: "2000", recipient });
    expect(next.description).toBe("Second");
    expect(next.id).not.toBe(first.id);

    // Another tenant's paywall on the same terms gets challenges bound to its own paywall.
    const other = await openShop({ networks: ["tempo-testnet"], price: "2000", paywall: { description: "Second" } });
    await setTempoWallet(other.actor.tenant.id, recipient);
    const theirs = await mppChallengeOf(other.mpp as string);
    expect(theirs.request).toMatchObject({ amount: "2000", recipient });
    // The paywall a challenge is bound to travels in its `opaque` (base64url JSON, HMAC-bound with the rest).
    const boundTo = (c: typeof next) => atob((c.opaque ?? "").replaceAll("-", "+").replaceAll("_", "/"));
    expect(boundTo(next)).toContain(shop.paywallId);
    expect(boundTo(theirs)).toContain(other.paywallId);
    expect(boundTo(theirs)).not.toContain(shop.paywallId);
  }, 60_000); // the first MPP request loads mppx

  it("a price changed in the database is named at once; a credential made at the old one is refused without a charge", async () => {
    const shop = await mppShop({ price: "1000" });
    const firstRes = await gatewayFetch(shop.mpp);
    expect(Challenge.fromResponse(firstRes).request).toMatchObject({ amount: "1000" });
    const buyer = tempo.buyers[0] as (typeof tempo.buyers)[number];
    const credential = await createMppBuyer({
      privateKey: buyer.privateKey,
      rpcUrl: TEMPO_RPC,
      chainId: tempo.chainId,
      fetch: gatewayFetch,
    }).mppx.createCredential(firstRes);

    await setPrice(shop.paywallId, "3000");
    const next = Challenge.fromResponse(await gatewayFetch(shop.mpp));
    expect(next.request).toMatchObject({ amount: "3000" });
    const res = await gatewayFetch(shop.mpp, { headers: { Authorization: credential } });
    expect(res.status).toBe(402);
    expect(Challenge.fromResponse(res).request).toMatchObject({ amount: "3000" });
    expect(((await res.json()) as { detail: string }).detail).toMatch(/amount does not match/);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toHaveLength(0);
    expect(await tempoBalanceOf(shop.recipient)).toBe(0n);
  }, 60_000); // the first MPP request loads mppx
});

describe("what a payment URL answers follows the database at once, whatever wrote it", () => {
  // The gateway keeps each payment URL's paywall per state (src/db/gateway.ts): the tenant's catalog version, which
  // the database's triggers move on any write of its services and paywalls (migrations/0019), and its wallets.
  const sql = (query: string, ...values: unknown[]) =>
    env.DB.prepare(query)
      .bind(...values)
      .run();

  it.each(["x402", "mpp"] as const)(
    "%s: disabled, enabled, its methods narrowed, then deleted, in plain SQL",
    async (protocol) => {
      const shop = await openShop({ networks: ["base-sepolia", "tempo-testnet"], price: "1000" });
      const url = shop[protocol] as string;
      const status = async (method = "GET") => (await gatewayFetch(url, { method })).status;
      expect(await status()).toBe(402);
      await sql("UPDATE paywalls SET enabled = 0 WHERE id = ?", shop.paywallId);
      expect(await status()).toBe(404);
      await sql("UPDATE paywalls SET enabled = 1 WHERE id = ?", shop.paywallId);
      expect(await status()).toBe(402);
      await sql(`UPDATE paywalls SET allowed_methods = '["POST"]' WHERE id = ?`, shop.paywallId);
      expect(await status()).toBe(405);
      expect(await status("POST")).toBe(402);
      await sql("DELETE FROM paywalls WHERE id = ?", shop.paywallId);
      expect(await status("POST")).toBe(404);
    },
    60_000,
  ); // the first MPP request loads mppx

  it("mpp: the tenant's Tempo wallet changed alone (no catalog write) is the next challenge's recipient", async () => {
    const shop = await mppShop({ price: "1000" });
    const recipientOf = async () =>
      (Challenge.fromResponse(await gatewayFetch(shop.mpp)).request as { recipient: string }).recipient;
    expect(await recipientOf()).toBe(shop.recipient);
    const next = await setTempoWallet(shop.actor.tenant.id);
    expect(await recipientOf()).toBe(next);
  }, 60_000);
});

describe("the x402 challenge after its service changed outside the API", () => {
  it("a service renamed in plain SQL (no version of its own moved) is named in the next challenge", async () => {
    const shop = await openShop({ price: "1000" });
    const nameOf = async () => (await challengeOf(shop.x402)).resource.serviceName;
    const before = await nameOf();
    expect(before).toBeTruthy();
    await env.DB.prepare("UPDATE services SET name = ? WHERE id = ?").bind("Renamed by hand", shop.serviceId).run();
    expect(await nameOf()).toBe("Renamed by hand");
  });
});
