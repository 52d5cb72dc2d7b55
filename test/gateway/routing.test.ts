// What the payment URLs refuse before any payment, the MPP challenge, and SIGNED_URL fulfilment.
import { env } from "cloudflare:workers";
import { Challenge } from "mppx";
import { describe, expect, it } from "vitest";
import { paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { MAX_BUYER_BODY_BYTES } from "../../src/gateway/app.ts";
import { api } from "../support/client.ts";
import { balanceOf, buyer, gatewayFetch, openShop, recordsLanded, upstreamRequests } from "./support.ts";

describe("refusals before payment", () => {
  it("an unknown service or slug is a 404 in the error envelope", async () => {
    const shop = await openShop();
    for (const url of [shop.x402.replace(shop.slug, "nope"), shop.x402.replace(shop.serviceId, "svc_000000000000000000000000")]) {
      const res = await gatewayFetch(url);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: "NOT_FOUND", meta: { requestId: expect.stringMatching(/^req_/) } });
    }
  });

  it("a disabled paywall is a 404", async () => {
    const shop = await openShop();
    const patched = await api(`/v1/paywalls/${shop.paywallId}`, {
      key: shop.actor.key,
      method: "PATCH",
      body: { enabled: false },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await gatewayFetch(shop.x402)).status).toBe(404);
  });

  it("a method outside allowedMethods is a 405 with Allow", async () => {
    const shop = await openShop({ paywall: { allowedMethods: ["GET", "POST"] } });
    for (const method of ["PUT", "DELETE"]) {
      const res = await gatewayFetch(shop.x402, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, POST");
      expect(await res.json()).toMatchObject({ code: "METHOD_NOT_ALLOWED" });
    }
  });

  it("a body over the limit is a 413 in the error envelope, declared or chunked, before anything is verified", async () => {
    const shop = await openShop({ paywall: { allowedMethods: ["POST"] } });
    const big = "x".repeat(MAX_BUYER_BODY_BYTES + 1);
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    for (const body of [big, chunked]) {
      const res = await gatewayFetch(shop.x402, { method: "POST", body, headers: { "PAYMENT-SIGNATURE": "e30" } });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ code: "VALIDATION_ERROR", meta: { requestId: expect.stringMatching(/^req_/) } });
    }
    expect(await upstreamRequests(shop.prefix)).toEqual([]);
  });

  it("MPP on a paywall without a Tempo network is a 404", async () => {
    const shop = await openShop();
    expect(shop.mpp).toBeNull();
    const res = await gatewayFetch(shop.x402.replace("/api/x402/", "/api/mpp/"));
    expect(res.status).toBe(404);
  });

  it("the payment URLs are not in the management API's document and need no API key", async () => {
    const doc = await api("/openapi.json");
    expect(Object.keys(doc.body.paths).some((p) => p.startsWith("/api/"))).toBe(false);
  });
});

describe("MPP challenge", () => {
  it("is WWW-Authenticate: Payment for tempo/charge with amount, currency and the tenant's Tempo wallet, decoded by mppx", async () => {
    const shop = await openShop({ price: "2500", networks: ["base-sepolia", "tempo-testnet"] });
    expect(shop.mpp).toMatch(/\/api\/mpp\/pay\//);
    const res = await gatewayFetch(shop.mpp as string);
    expect(res.status).toBe(402);
    const challenge = Challenge.fromResponse(res);
    expect(challenge).toMatchObject({
      method: "tempo",
      intent: "charge",
      request: {
        amount: "2500",
        currency: "0x20c0000000000000000000000000000000000000",
        recipient: shop.actor.tenant.tempoWalletAddress,
      },
    });
  }, 60_000); // the first MPP request loads mppx, which the test runtime transforms on first use
});

describe("SIGNED_URL", () => {
  it("settles, hands out a URL that performs the upstream call once; a second use and an expired URL are refused", async () => {
    const shop = await openShop({ price: "700", paywall: { fulfillmentMode: "SIGNED_URL" } });
    const res = await buyer().fetch(shop.x402);
    expect(res.status).toBe(200);
    expect(paymentResponseOf(res)).toMatchObject({ success: true });
    const { data } = (await res.json()) as { data: { url: string; expiresAt: string } };
    expect(Date.parse(data.expiresAt) - Date.now()).toBeGreaterThan(290_000);
    expect(await balanceOf(shop.merchant)).toBe(700n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);

    const first = await gatewayFetch(`${data.url}?q=1`);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ path: `${shop.prefix}/echo`, query: "q=1" });
    const second = await gatewayFetch(data.url);
    expect(second.status).toBe(404);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);

    const again = await buyer().fetch(shop.x402);
    const { data: next } = (await again.json()) as { data: { url: string } };
    await recordsLanded(); // the payments' transactions in D1 (the read model), which the expiry below selects by
    await env.DB.prepare(
      "UPDATE signed_urls SET expires_at = ? WHERE transaction_id IN (SELECT id FROM transactions WHERE paywall_id = ?)",
    )
      .bind(Date.now() - 1000, shopPaywall(shop))
      .run();
    expect((await gatewayFetch(next.url)).status).toBe(404);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("a concurrent double fetch of one URL calls the upstream once", async () => {
    const shop = await openShop({ price: "800", paywall: { fulfillmentMode: "SIGNED_URL" } });
    const { data } = (await (await buyer().fetch(shop.x402)).json()) as { data: { url: string } };
    const answers = await Promise.all([gatewayFetch(data.url), gatewayFetch(data.url)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 404]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });
});

const shopPaywall = (shop: { paywallId: string }) => shop.paywallId;
