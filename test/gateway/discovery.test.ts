// Discovery at the gateway (docs/discovery.md): the Bazaar extension of every x402 402 and what a cataloguing
// facilitator answers about it, the document and the 402 changing together, and the free and wallet sign-in routes
// a service declares, answered as declared.
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { validateDiscoveryExtensionSpec } from "@x402/extensions/bazaar";
import { createSIWxPayload, encodeSIWxHeader, SIGN_IN_WITH_X, type SIWxExtensionInfo } from "@x402/extensions/sign-in-with-x";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { api } from "../support/client.ts";
import { buyer, FACILITATOR, gatewayFetch, history, openShop, type Shop, upstreamRequests, waitFor } from "./support.ts";

const FORECAST_INPUT = {
  type: "object",
  properties: { city: { type: "string", description: "City name", examples: ["Lisbon"] }, days: { type: "integer", minimum: 1 } },
  required: ["city"],
};
const FORECAST_OUTPUT = { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] };

const challengeOf = async (url: string, init?: RequestInit) => {
  const res = await gatewayFetch(url, init);
  expect(res.status).toBe(402);
  return decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string);
};

const patchPaywall = async (shop: Shop, body: Record<string, unknown>) => {
  const res = await api(`/v1/paywalls/${shop.paywallId}`, { key: shop.actor.key, method: "PATCH", body });
  expect(res.status, res.text).toBe(200);
};
const patchService = async (shop: Shop, body: Record<string, unknown>) => {
  const res = await api(`/v1/services/${shop.serviceId}`, { key: shop.actor.key, method: "PATCH", body });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};
const preview = async (shop: Shop) => {
  const res = await api(`/v1/services/${shop.serviceId}/discovery`, { key: shop.actor.key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};
const documentOf = async (shop: Shop) => {
  const res = await gatewayFetch(`https://pay.example.com/api/discovery/${shop.serviceId}/openapi.json`);
  expect(res.status).toBe(200);
  return res.json() as Promise<{ paths: Record<string, Record<string, Record<string, unknown>>> }>;
};
const pathOf = (url: string) => new URL(url).pathname;

describe("the Bazaar extension in every x402 402", () => {
  it("describes a GET paywall's query, output and service; the refusals' 402s carry it too", async () => {
    const shop = await openShop({
      paywall: {
        allowedMethods: ["GET"],
        inputSchema: FORECAST_INPUT,
        outputSchema: FORECAST_OUTPUT,
        outputExample: { tempC: 21.5 },
      },
    });
    await patchService(shop, { name: "Weather Pro", categories: ["weather", "data"] });
    for (const init of [undefined, { headers: { "PAYMENT-SIGNATURE": "not a payment" } }]) {
      const required = await challengeOf(shop.x402, init);
      const bazaar = required.extensions?.bazaar as { info: Record<string, unknown>; schema: Record<string, unknown> };
      expect(bazaar.info).toEqual({
        input: { type: "http", method: "GET", queryParams: { city: "Lisbon" } },
        output: { type: "json", example: { tempC: 21.5 } },
      });
      expect(bazaar.schema).toMatchObject({
        properties: {
          input: {
            properties: {
              method: { enum: ["GET"] },
              queryParams: { type: "object", properties: FORECAST_INPUT.properties, required: ["city"] },
            },
            required: ["type", "method"],
          },
          output: { properties: { example: { type: "object", properties: { tempC: { type: "number" } } } } },
        },
      });
      expect(validateDiscoveryExtensionSpec(bazaar as never)).toEqual({ valid: true });
      expect(required.resource).toMatchObject({ url: shop.x402, serviceName: "Weather Pro", tags: ["weather", "data"] });
    }
  });

  it("describes the method asked: a JSON body for POST, a generic input and an output example ({}) without schemas", async () => {
    const shop = await openShop({ paywall: { allowedMethods: ["GET", "POST"] } });
    const post = (await challengeOf(shop.x402, { method: "POST" })).extensions?.bazaar as { info: unknown; schema: unknown };
    expect(post.info).toEqual({
      input: { type: "http", method: "POST", bodyType: "json", body: {} },
      output: { type: "json", example: {} },
    });
    expect(post.schema).toMatchObject({
      properties: { input: { properties: { body: { type: "object" }, method: { enum: ["POST"] } } } },
    });
    const get = (await challengeOf(shop.x402)).extensions?.bazaar as { info: unknown };
    expect(get.info).toEqual({ input: { type: "http", method: "GET", queryParams: {} }, output: { type: "json", example: {} } });
  });

  it("is catalogued by the facilitator on settlement, which the tenant then reads; buyers never see the answer", async () => {
    const shop = await openShop({
      paywall: { allowedMethods: ["GET"], inputSchema: FORECAST_INPUT, outputExample: { tempC: 1 } },
    });
    const res = await buyer().fetch(`${shop.x402}?city=Lisbon`);
    expect(res.status).toBe(200);
    expect(paymentResponseOf(res)).not.toHaveProperty("extensionResponses");
    const listing = await waitFor(async () => (await preview(shop)).listings[0]);
    expect(listing).toMatchObject({
      paywallId: shop.paywallId,
      slug: shop.slug,
      status: "success",
      reason: null,
      facilitatorUrl: FACILITATOR,
    });
    const catalogue = (await (await fetch(`${FACILITATOR}/__facilitator/bazaar`)).json()) as {
      resourceUrl: string;
      method: string;
    }[];
    expect(catalogue).toContainEqual(expect.objectContaining({ resourceUrl: shop.x402, method: "GET" }));
  });

  it("a listing the facilitator refuses is shown with its reason, and the payment still goes through", async () => {
    // A required property whose pattern the example made from the schema cannot follow: the facilitator's validator refuses.
    const inputSchema = { type: "object", properties: { code: { type: "string", pattern: "^[0-9]{4}$" } }, required: ["code"] };
    const shop = await openShop({ paywall: { allowedMethods: ["GET"], inputSchema } });
    const res = await buyer().fetch(`${shop.x402}?code=1234`);
    expect(res.status).toBe(200);
    const listing = await waitFor(async () => (await preview(shop)).listings[0]);
    expect(listing).toMatchObject({ status: "rejected", reason: expect.stringMatching(/pattern/) });
    expect((await preview(shop)).diagnostics).toContainEqual(
      expect.objectContaining({ severity: "warn", code: "LISTING_REJECTED", paywallId: shop.paywallId }),
    );
    expect((await history(shop)).transactions[0]).toMatchObject({ status: "COMPLETED" });
  });
});

describe("the document and the gateway agree", () => {
  it("sessions: the 402's Bazaar extension and the document say so, with the minimum deposit, only while on", async () => {
    const shop = await openShop({ price: "10000", paywall: { allowedMethods: ["GET"] } });
    const operation = async () => (await documentOf(shop)).paths[pathOf(shop.x402)]?.get as Record<string, unknown>;
    const bazaarOf = async () =>
      (await challengeOf(shop.x402)).extensions?.bazaar as { info: Record<string, unknown>; schema: Record<string, unknown> };
    const off = async () => {
      expect((await bazaarOf()).info).not.toHaveProperty("sessions");
      const op = await operation();
      expect(op["x-payment-info"]).not.toHaveProperty("sessions");
      expect(op.description).not.toMatch(/[Ss]ession/);
    };
    await off();

    await patchPaywall(shop, { sessions: { enabled: true, minDeposit: "2500000" } });
    const terms = { scheme: "batch-settlement", minDeposit: "2500000", minDepositUsd: "2.5" };
    const bazaar = await bazaarOf();
    expect(bazaar.info.sessions).toEqual(terms);
    expect(bazaar.schema).toMatchObject({ properties: { sessions: { properties: { scheme: { const: "batch-settlement" } } } } });
    expect(validateDiscoveryExtensionSpec(bazaar as never)).toEqual({ valid: true });
    const op = await operation();
    expect(op["x-payment-info"]).toMatchObject({ sessions: terms });
    expect(op.description).toContain("Sessions accepted (x402 batch-settlement): deposit at least 2.5 USD once");
    // Per-call payments stay offered.
    expect((await challengeOf(shop.x402)).accepts.map((a) => [a.scheme, a.amount])).toContainEqual(["exact", "10000"]);

    await patchPaywall(shop, { sessions: { enabled: false } });
    await off();
  });

  it("a new price is in the document and the 402 at once", async () => {
    const shop = await openShop({ price: "10000" });
    const paymentInfo = async () => (await documentOf(shop)).paths[pathOf(shop.x402)]?.get?.["x-payment-info"];
    expect(await paymentInfo()).toMatchObject({ price: { mode: "fixed", currency: "USD", amount: "0.01" } });
    expect((await challengeOf(shop.x402)).accepts.map((a) => a.amount)).toEqual(["10000"]);
    await patchPaywall(shop, { price: "2500000" });
    expect(await paymentInfo()).toMatchObject({ price: { mode: "fixed", currency: "USD", amount: "2.5" } });
    expect((await challengeOf(shop.x402)).accepts.map((a) => a.amount)).toEqual(["2500000"]);
  });

  it("a disabled paywall is in no document while its URL answers 404, and is back once enabled", async () => {
    const shop = await openShop();
    const listed = async () => {
      const [own, root, llms] = await Promise.all([
        documentOf(shop),
        gatewayFetch("https://pay.example.com/openapi.json").then((r) => r.json() as Promise<{ paths: Record<string, unknown> }>),
        gatewayFetch(`https://pay.example.com/api/discovery/${shop.serviceId}/llms.txt`).then((r) => r.text()),
      ]);
      return [pathOf(shop.x402) in own.paths, llms.includes(shop.x402), pathOf(shop.x402) in root.paths];
    };
    expect((await listed()).slice(0, 2)).toEqual([true, true]);
    await patchPaywall(shop, { enabled: false });
    expect(await listed()).toEqual([false, false, false]);
    expect((await gatewayFetch(shop.x402)).status).toBe(404);
    await patchPaywall(shop, { enabled: true });
    expect((await listed()).slice(0, 2)).toEqual([true, true]);
    expect((await gatewayFetch(shop.x402)).status).toBe(402);
  });
});

describe("free routes (publicRoutes)", () => {
  it("are forwarded without payment, with the service's credentials and without a buyer's X-SIWX-* headers", async () => {
    const shop = await openShop({ authMethod: "bearer", authConfig: { bearerToken: "upstream-secret" } });
    await patchService(shop, { publicRoutes: ["/status"] });
    const url = `https://pay.example.com/api/public/${shop.serviceId}/status?verbose=1`;
    const res = await gatewayFetch(url, { headers: { "X-SIWX-Address": "0x0000000000000000000000000000000000000001" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("PAYMENT-REQUIRED")).toBeNull();
    const [seen] = await upstreamRequests(shop.prefix);
    expect(seen).toMatchObject({ method: "GET", path: `${shop.prefix}/status`, query: "verbose=1" });
    expect(seen?.headers.authorization).toBe("Bearer upstream-secret");
    expect(seen?.headers).not.toHaveProperty("x-siwx-address");
    const { transactions, events } = await history(shop);
    expect([transactions, events]).toEqual([[], []]);
  });

  it("only the listed routes, only GET, and only on the payment origin", async () => {
    const shop = await openShop();
    await patchService(shop, { publicRoutes: ["/status"] });
    const base = `https://pay.example.com/api/public/${shop.serviceId}`;
    expect((await gatewayFetch(`${base}/echo`)).status).toBe(404);
    expect((await gatewayFetch(`${base}/status/`)).status).toBe(404);
    const post = await gatewayFetch(`${base}/status`, { method: "POST", body: "{}" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    expect((await api(`/api/public/${shop.serviceId}/status`)).status).toBe(404);
    expect(await upstreamRequests(shop.prefix)).toEqual([]);
  });
});

describe("wallet sign-in routes (siwxRoutes)", () => {
  const wallet = () => privateKeyToAccount(generatePrivateKey());

  async function siwxShop() {
    const shop = await openShop({ networks: ["base-sepolia", "tempo-testnet"] });
    await patchService(shop, { siwxRoutes: ["/me", "/admin"] });
    return {
      shop,
      me: `https://pay.example.com/api/siwx/${shop.serviceId}/me`,
      admin: `https://pay.example.com/api/siwx/${shop.serviceId}/admin`,
    };
  }

  /** A SIGN-IN-WITH-X header for `url`'s challenge, signed by `account` (its info edited first by `edit`). */
  async function signIn(url: string, account: ReturnType<typeof wallet>, edit = (info: SIWxExtensionInfo) => info, sendTo = url) {
    const required = await challengeOf(url);
    const extension = required.extensions?.[SIGN_IN_WITH_X] as {
      info: SIWxExtensionInfo;
      supportedChains: { chainId: string; type: "eip191" }[];
    };
    const chain = extension.supportedChains[0] as { chainId: string; type: "eip191" };
    const payload = await createSIWxPayload(
      { ...edit(extension.info), chainId: chain.chainId, type: chain.type },
      account,
      sendTo,
    );
    return encodeSIWxHeader(payload);
  }

  it("answer the SIWX challenge, a 402 with no payment option, and forward nothing", async () => {
    const { shop, me } = await siwxShop();
    const required = await challengeOf(me);
    expect(required.accepts).toEqual([]);
    const extension = required.extensions?.[SIGN_IN_WITH_X] as { info: SIWxExtensionInfo; supportedChains: unknown[] };
    expect(extension.info).toMatchObject({
      domain: "pay.example.com",
      uri: me,
      resources: [me],
      nonce: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(extension.supportedChains).toEqual([
      { chainId: "eip155:84532", type: "eip191" },
      { chainId: "eip155:42431", type: "eip191" },
    ]);
    expect(await upstreamRequests(shop.prefix)).toEqual([]);
  });

  it("forward a signed request with the verified wallet in X-SIWX-Address, never the buyer's own copy", async () => {
    const { shop, me } = await siwxShop();
    const account = wallet();
    const header = await signIn(me, account);
    const res = await gatewayFetch(me, {
      headers: {
        "SIGN-IN-WITH-X": header,
        "X-SIWX-Address": "0x0000000000000000000000000000000000000001",
        "x-siwx-chain": "forged",
      },
    });
    expect(res.status).toBe(200);
    const [seen] = await upstreamRequests(shop.prefix);
    expect(seen?.path).toBe(`${shop.prefix}/me`);
    expect(seen?.headers["x-siwx-address"]).toBe(account.address);
    expect(seen?.headers["x-siwx-chain"]).toBe("eip155:84532");
    expect(seen?.headers).not.toHaveProperty("sign-in-with-x");
    expect((await history(shop)).transactions).toEqual([]);
  });

  it("take each sign-in once, for its own route, from a challenge the gateway issued, signed by its wallet", async () => {
    const { shop, me, admin } = await siwxShop();
    const account = wallet();
    const refusal = async (url: string, header: string) => {
      const res = await gatewayFetch(url, { headers: { "SIGN-IN-WITH-X": header } });
      expect(res.status).toBe(402);
      return decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string).error;
    };
    // Replayed.
    const once = await signIn(me, account);
    expect((await gatewayFetch(me, { headers: { "SIGN-IN-WITH-X": once } })).status).toBe(200);
    expect(await refusal(me, once)).toMatch(/already used/);
    // Signed for /me, sent to /admin.
    expect(await refusal(admin, await signIn(me, account))).toMatch(/another route/);
    // A nonce the client made up, a younger issuedAt than the challenge's: not issued here.
    expect(await refusal(me, await signIn(me, account, (info) => ({ ...info, nonce: "ab".repeat(32) })))).toMatch(/not issued/);
    const later = new Date(Date.now() + 1000).toISOString();
    expect(await refusal(me, await signIn(me, account, (info) => ({ ...info, issuedAt: later })))).toMatch(/not issued|future/);
    // Another wallet's signature over the same message.
    const payload = JSON.parse(atob(await signIn(me, account)));
    const forged = btoa(JSON.stringify({ ...payload, address: wallet().address }));
    expect(await refusal(me, forged)).toMatch(/[Ss]ignature/);
    expect(await refusal(me, "not base64!")).toMatch(/not a valid sign-in/);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
  });

  it("take a sign-in only as the challenge offered it: another statement, resources, expiry or extra field is refused", async () => {
    const { shop, me } = await siwxShop();
    const account = wallet();
    const refusal = async (edit: (info: SIWxExtensionInfo) => SIWxExtensionInfo) => {
      const res = await gatewayFetch(me, { headers: { "SIGN-IN-WITH-X": await signIn(me, account, edit) } });
      expect(res.status).toBe(402);
      return decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string).error;
    };
    // Each is really signed by the wallet (viem, a local key): only the text differs from the challenge's.
    expect(await refusal((info) => ({ ...info, statement: "Transfer all my funds to 0xdead" }))).toMatch(/another statement/);
    expect(await refusal(({ statement: _, ...info }) => info)).toMatch(/another statement/);
    expect(await refusal((info) => ({ ...info, resources: [me, "https://evil.example/"] }))).toMatch(/other resources/);
    expect(await refusal(({ resources: _, ...info }) => info)).toMatch(/other resources/);
    const day = new Date(Date.now() + 86_400_000).toISOString();
    expect(await refusal((info) => ({ ...info, expirationTime: day }))).toMatch(/expire as the challenge/);
    expect(await refusal(({ expirationTime: _, ...info }) => info)).toMatch(/expire as the challenge/);
    expect(await refusal((info) => ({ ...info, requestId: "r1" }))).toMatch(/did not offer/);
    expect(await upstreamRequests(shop.prefix)).toEqual([]);
    // The challenge signed as given still signs in.
    expect((await gatewayFetch(me, { headers: { "SIGN-IN-WITH-X": await signIn(me, account) } })).status).toBe(200);
  });
});

describe("paid routes", () => {
  it("never forward a buyer's X-SIWX-* headers: allowedHeaders cannot list them, and a paid request drops them", async () => {
    // Listing one is refused on write (test/resources/field-rules.test.ts); a buyer sending one anyway forwards nothing.
    const shop = await openShop({ allowedHeaders: ["X-Trace"] });
    const res = await buyer().fetch(shop.x402, {
      headers: { "X-SIWX-Address": "0x0000000000000000000000000000000000000001", "X-Trace": "t1" },
    });
    expect(res.status).toBe(200);
    const [seen] = await upstreamRequests(shop.prefix);
    expect(seen?.headers["x-trace"]).toBe("t1");
    expect(seen?.headers).not.toHaveProperty("x-siwx-address");
  });
});
