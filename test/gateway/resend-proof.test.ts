// Who a paid answer is served to again. A settled x402 payment is public: its EIP-3009 authorization and signature
// are the transfer's calldata, and a fresh 402 gives the rest of a `PAYMENT-SIGNATURE`. So a kept answer is served
// again only to a request carrying what only the buyer sent (the challenge's nonce or its `payment-identifier`, and its
// `Authorization`); anyone else is answered as for a payment the gateway does not know, and the 409 for "another
// request" is the buyer's alone. And an x402 payment pays for the payment URL it was offered for, not another
// paywall with the same terms.
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { eip3009ABI } from "@x402/evm";
import { createPublicClient, decodeFunctionData, http, serializeSignature } from "viem";
import { describe, expect, it } from "vitest";
import { api, send } from "../support/client.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  gatewayFetch,
  history,
  net,
  openShop,
  settlementsOf,
  signedPayment,
  upstreamRequests,
  verificationsOf,
} from "./support.ts";

const chain = createPublicClient({ transport: http("https://rpc.gateway.test") });

const payX402 = (url: string, header: string, headers: Record<string, string> = {}) =>
  send(new Request(url, { headers: { ...headers, "PAYMENT-SIGNATURE": header } }), GATEWAY_ENV);

/**
 * What an observer of the chain rebuilds from a settled payment: the authorization and signature of its
 * `transferWithAuthorization` calldata (read from the real transaction), completed with a fresh 402 of the payment
 * URL it guessed, as the x402 client would fill it in.
 */
async function rebuiltFromChain(txHash: `0x${string}`, url: string): Promise<string> {
  const tx = await chain.getTransaction({ hash: txHash });
  const { functionName, args } = decodeFunctionData({ abi: eip3009ABI, data: tx.input });
  expect(functionName).toBe("transferWithAuthorization");
  const [from, to, value, validAfter, validBefore, nonce, ...sig] = args as unknown as [
    `0x${string}`,
    `0x${string}`,
    bigint,
    bigint,
    bigint,
    `0x${string}`,
    ...unknown[],
  ];
  const signature =
    sig.length === 1
      ? (sig[0] as `0x${string}`)
      : serializeSignature({ v: BigInt(sig[0] as number), r: sig[1] as `0x${string}`, s: sig[2] as `0x${string}` });
  const challenge = await gatewayFetch(url);
  expect(challenge.status).toBe(402);
  const required = decodePaymentRequiredHeader(challenge.headers.get("PAYMENT-REQUIRED") as string);
  const payload: PaymentPayload = {
    x402Version: 2,
    resource: required.resource,
    accepted: required.accepts[0] as PaymentPayload["accepted"],
    payload: {
      authorization: {
        from,
        to,
        value: value.toString(),
        validAfter: validAfter.toString(),
        validBefore: validBefore.toString(),
        nonce,
      },
      signature,
    },
    extensions: required.extensions,
  };
  return encodePaymentSignatureHeader(payload);
}

/** A refusal as a client can compare it: status, body, the 402's error, and the headers that are not per request. */
async function refusalOf(res: Response) {
  const required = res.headers.get("PAYMENT-REQUIRED");
  return {
    status: res.status,
    body: await res.text(),
    error: required ? decodePaymentRequiredHeader(required).error : undefined,
    headers: [...res.headers.keys()].filter((name) => !["x-request-id", "date", "payment-required"].includes(name)).sort(),
  };
}

// The first payment of a file loads the payment SDKs in workerd: seconds on a busy machine.
describe("an observer who rebuilds a settled x402 payment from the chain", { timeout: 20_000 }, () => {
  it.each([
    { service: "bearer-customer", authMethod: "bearer-customer", buyerHeaders: { Authorization: "Bearer buyer-own-token" } },
    { service: "plain", authMethod: "none", buyerHeaders: {} as Record<string, string> },
  ])(
    "$service service: is not served the buyer's answer for the right request; the buyer's resend still is",
    async ({ authMethod, buyerHeaders }) => {
      const shop = await openShop({ price: "2200", authMethod });
      const marker = crypto.randomUUID();
      const url = `${shop.x402}?marker=${marker}`;
      const { header } = await signedPayment(url);
      const first = await payX402(url, header, buyerHeaders);
      const firstBody = await first.text();
      expect(first.status).toBe(200);
      expect(firstBody).toContain(marker);
      const txHash = first.headers.get("Payment-Reference") as `0x${string}`;
      expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);

      // The observer knows the URL (the payee names the tenant, discovery lists the routes) and guessed the query.
      const rebuilt = await rebuiltFromChain(txHash, url);
      const observed = await payX402(url, rebuilt);
      const observedBody = await observed.text();
      expect(observed.status).toBe(402);
      expect(observedBody).not.toContain(marker);
      expect(observedBody).not.toContain("buyer-own-token");
      expect(observed.headers.get("Payment-Transaction-Id")).toBeNull();
      expect(observed.headers.get("Payment-Reference")).toBeNull();
      // Nor with a bearer of its own on the bearer-customer service.
      if (authMethod === "bearer-customer") {
        const withOwn = await payX402(url, rebuilt, { Authorization: "Bearer observer-token" });
        expect(withOwn.status).toBe(402);
        expect(await withOwn.text()).not.toContain(marker);
      }

      // The buyer resending exactly what it sent gets its answer, byte for byte.
      const again = await payX402(url, header, buyerHeaders);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(firstBody);
      expect(again.headers.get("Payment-Reference")).toBe(txHash);
      expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
      expect(await balanceOf(shop.merchant)).toBe(2200n);
      expect((await history(shop)).transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash })]);
    },
  );

  it("bearer-customer: the buyer's own credential without its Authorization is not served its personal answer", async () => {
    const shop = await openShop({ price: "2300", authMethod: "bearer-customer" });
    const { header } = await signedPayment(shop.x402);
    const first = await payX402(shop.x402, header, { Authorization: "Bearer buyer-own-token" });
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("buyer-own-token");
    const bare = await payX402(shop.x402, header);
    expect(bare.status).toBe(402);
    expect(await bare.text()).not.toContain("buyer-own-token");
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    expect(await balanceOf(shop.merchant)).toBe(2300n);
  });
});

describe("the 409 for another request", () => {
  it("to a party that has not proven it is the buyer: the same answer as a payment the gateway does not know, no transaction id", async () => {
    const shop = await openShop({ price: "2400" });
    const paid = await signedPayment(shop.x402);
    const first = await payX402(shop.x402, paid.header);
    expect(first.status).toBe(200);
    const txHash = first.headers.get("Payment-Reference") as `0x${string}`;
    const rebuilt = await rebuiltFromChain(txHash, shop.x402);

    // "No such payment": an authorization the gateway never recorded, used on chain (settled at the facilitator
    // directly), presented here for the first time.
    const unknown = await signedPayment(shop.x402);
    const settled = await fetch(`${FACILITATOR}/settle`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ x402Version: 2, paymentPayload: unknown.payload, paymentRequirements: unknown.payload.accepted }),
    });
    expect(((await settled.json()) as { success: boolean }).success).toBe(true);
    const noSuchPayment = await refusalOf(await payX402(`${shop.x402}?other=1`, unknown.header));

    const wrongRequest = await refusalOf(await payX402(`${shop.x402}?other=1`, rebuilt));
    const rightRequest = await refusalOf(await payX402(shop.x402, rebuilt));
    expect(noSuchPayment.status).toBe(402);
    expect(wrongRequest).toEqual(noSuchPayment);
    expect(rightRequest).toEqual(noSuchPayment);
    for (const refusal of [wrongRequest, rightRequest]) {
      expect(refusal.headers).not.toContain("payment-transaction-id");
      expect(refusal.body).not.toMatch(/txn_|other-request|CONFLICT/);
    }
    // The buyer's payment and the one settled outside the gateway; nothing more.
    expect(await balanceOf(shop.merchant)).toBe(4800n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("to the buyer itself (its own credential and secret): 409 other-request, naming no transaction", async () => {
    const shop = await openShop({ price: "2500" });
    const { header } = await signedPayment(shop.x402);
    expect((await payX402(shop.x402, header)).status).toBe(200);
    const res = await payX402(`${shop.x402}?other=1`, header);
    expect(res.status).toBe(409);
    expect(res.headers.get("Payment-Transaction-Id")).toBeNull();
    const body = (await res.json()) as { code: string; details: Record<string, unknown> };
    expect(body).toMatchObject({ code: "CONFLICT", details: { reason: "other-request" } });
    expect(body.details.transactionId).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain("txn_");
  });
});

describe("an x402 payment pays for the payment URL it was offered for", () => {
  it("a credential for paywall A presented at paywall B with identical terms: 402, nothing verified or charged; A still takes it", async () => {
    const shop = await openShop({ price: "2600", paywall: { name: "Twin", description: "Same terms" } });
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
        price: "2600",
        currency: "USDC",
        networks: ["base-sepolia"],
        fulfillmentMode: "PROXY",
      },
    });
    expect(twin.status, twin.text).toBe(201);
    const twinUrl = twin.body.data.paymentUrls.x402 as string;
    const paid = await signedPayment(shop.x402);
    // The same requirements at both: only the resource tells them apart.
    const twinChallenge = decodePaymentRequiredHeader((await gatewayFetch(twinUrl)).headers.get("PAYMENT-REQUIRED") as string);
    expect(twinChallenge.accepts).toEqual(paid.required.accepts);
    const balance = await balanceOf(net.buyer.address);

    const res = await payX402(twinUrl, paid.header);
    expect(res.status).toBe(402);
    const refusal = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string);
    expect(refusal.error).toMatch(/another resource/);
    expect(refusal.resource.url).toBe(twinUrl);
    expect(await verificationsOf(paid.nonce)).toBe(0);
    expect(await settlementsOf(paid.nonce)).toEqual([]);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
    expect((await history(shop)).transactions).toHaveLength(0);
    expect(await balanceOf(shop.merchant)).toBe(0n);
    expect(await balanceOf(net.buyer.address)).toBe(balance);

    // Not used up: at the paywall it was offered for, it pays as usual.
    const ok = await payX402(shop.x402, paid.header);
    expect(ok.status).toBe(200);
    expect(await balanceOf(shop.merchant)).toBe(2600n);
  });
});
