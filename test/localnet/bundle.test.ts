// The production bundle (`npm run build`: wrangler's bundling, what `npm run deploy` uploads) through the gateway's
// outcomes, in workerd through Miniflare, on the local chains, paid from outside by `@x402/fetch` and mppx's client:
// an x402 and an MPP payment each succeed (the upstream answers, the merchant gains exactly the price, the tenant
// reads the transaction COMPLETED with its hash); the same paid request sent again, or ten times at once, gets the same
// answer byte for byte and is charged once; a payment-identifier reused for another request is 409; refusals (a
// malformed payment, one for other terms, a buyer who can no longer pay, an upstream failure) charge nothing; and when
// the answer of the settlement is lost (the router's faults, src/cli/localnet/outbound.ts: the settlement made or never
// made), the bundle settles from the chain, or answers 502 PAYMENT_OUTCOME_UNKNOWN and the payment's own object sweeps it
// later (from its alarm, in real time), after which the buyer's resend gets its answer. The tenant's reads wait for the
// payments' records to reach D1 (the read model, a moment behind: bundle-support.ts `historyOf`). The workerd gateway tests (npm run test:gateway) cover each
// case in depth on the same modules, unbundled; these run the same cases on the bundle that ships.
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { Credential } from "mppx";
import { type Address, createClient, createPublicClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { sendRawTransactionSync } from "viem/actions";
import { Actions } from "viem/tempo";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Buyer, paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { createOutboundRouter, GATEWAY_TEST_HOSTS } from "../../src/cli/localnet/outbound.ts";
import { type LocalStack, startStack } from "../../src/cli/localnet/stack.ts";
import { tempoChain } from "../../src/cli/localnet/tempo.ts";
import { type RunningWorker, startWorker } from "../browser/support/worker.ts";
import { fundedX402Buyer, historyOf, landed, OBJECT_SWEEP_AFTER_EXPIRY_MS, stubService, workerApi } from "./bundle-support.ts";

const PORT = 8897;
const PRICE = "4321"; // 0.004321 USDC

let stack: LocalStack;
let worker: RunningWorker;
const merchant = privateKeyToAddress(generatePrivateKey());
let serviceId: string;
let x402Url: string;
let mppUrl: string;
let paywallId: string;

const api = workerApi(() => worker);

/** The copies of the Worker whose money-moving calls meet a fault of the router (src/cli/localnet/outbound.ts). */
type Fault = "answer-lost" | "send-dropped";
/** The same payment URL on the copy of the Worker behind `fault` (its own payment origin). */
const behind = async (fault: Fault, url: string) => `${await worker.urlOf(fault)}${new URL(url).pathname}`;

/** The JSON-RPC calls the Worker sent to the Tempo chain. */
const tempoRpcCalls: { method: string; params: unknown[] }[] = [];
/** The Worker's outbound calls that went through a fault: `<host> <path or JSON-RPC method>`. */
const faulted: string[] = [];

beforeAll(async () => {
  stack = await startStack();
  const tempo = stack.info.tempo;
  if (!tempo) throw new Error("the local Tempo chain did not start");
  const router = createOutboundRouter({
    [GATEWAY_TEST_HOSTS.upstream]: stack.info.upstreamUrl,
    [GATEWAY_TEST_HOSTS.facilitator]: stack.info.facilitatorUrl,
    [GATEWAY_TEST_HOSTS.rpc]: stack.info.rpcUrl,
    [GATEWAY_TEST_HOSTS.tempoRpc]: tempo.rpcUrl,
  });
  // The facilitator and the Tempo RPC behind `fault`; the token's RPC (for the outcome) as it is.
  const faulty = (fault: Fault) => ({
    FACILITATOR_URL_TESTNET: `https://${fault}.${GATEWAY_TEST_HOSTS.facilitator}`,
    NETWORK_OVERRIDES: JSON.stringify({
      ...JSON.parse(stack.info.networkOverrides),
      "tempo-testnet": { rpcUrl: `https://${fault}.${GATEWAY_TEST_HOSTS.tempoRpc}` },
    }),
  });
  worker = await startWorker({
    port: PORT,
    vars: {
      FACILITATOR_URL_TESTNET: `https://${GATEWAY_TEST_HOSTS.facilitator}`,
      NETWORK_OVERRIDES: stack.info.networkOverrides,
    },
    variants: { "answer-lost": faulty("answer-lost"), "send-dropped": faulty("send-dropped") },
    outboundService: async (request) => {
      const { hostname, pathname } = new URL(request.url);
      if (hostname === GATEWAY_TEST_HOSTS.tempoRpc) {
        tempoRpcCalls.push(...[(await request.clone().json()) as (typeof tempoRpcCalls)[number]].flat());
      }
      if (/^(answer-lost|send-dropped)\./.test(hostname)) {
        const calls = hostname.includes("tempo-rpc") ? [(await request.clone().json()) as { method: string }].flat() : [];
        faulted.push(...(calls.length ? calls.map((c) => `${hostname} ${c.method}`) : [`${hostname} ${pathname}`]));
      }
      return router(request);
    },
  });
  serviceId = await stubService(worker, stack, merchant, "Bundle stub", "bundle");
  ({ x402: x402Url, mpp: mppUrl, id: paywallId } = await paywall("bundle"));
}, 240_000);

afterAll(async () => {
  await worker?.stop();
  await stack?.stop();
});

/** A paywall of the service (both networks) on `route` of the upstream stub; its payment URLs on the local Worker. */
async function paywall(slug: string, route = "/echo") {
  const created = await api("/v1/paywalls", {
    method: "POST",
    body: {
      slug,
      name: `Bundle paywall ${slug}`,
      targetType: "ROUTE",
      targetRoute: route,
      serviceId,
      price: PRICE,
      currency: "USDC",
      networks: [stack.info.networkId, "tempo-testnet"],
      fulfillmentMode: "PROXY",
    },
  });
  expect(created.status).toBe(201);
  const urls = created.body.data.paymentUrls ?? {};
  return { id: created.body.data.id as string, x402: urls.x402 as string, mpp: urls.mpp as string };
}

/** A paywall's transactions and events as the tenant reads them, once its payments' records landed (bundle-support.ts). */
const history = historyOf(api);

/**
 * How long a read waits for a PENDING payment's own sweep: its object sweeps it past its `validBefore` (unix seconds)
 * and `OBJECT_SWEEP_AFTER_EXPIRY_MS` at the latest, and its records land a moment later.
 */
const untilSwept = (validBefore: number) => validBefore * 1000 + OBJECT_SWEEP_AFTER_EXPIRY_MS + 15_000 - Date.now();

const usdcBalance = (address: string) =>
  createPublicClient({ transport: http(stack.info.rpcUrl) }).readContract({
    address: stack.info.usdc.address,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address as Address],
  });

const x402Buyer = () =>
  createX402Buyer({ privateKey: stack.info.buyer.privateKey, network: stack.info.network, usdc: stack.info.usdc.address });

/** A payment for the challenge at `url`, signed by the standard's client (for the terms as `change` alters them). */
async function signedX402(
  url: string,
  change?: (accepted: Record<string, unknown>) => void,
  buyer: { privateKey: `0x${string}` } = stack.info.buyer,
) {
  const b = createX402Buyer({ privateKey: buyer.privateKey, network: stack.info.network, usdc: stack.info.usdc.address });
  const challenge = await fetch(url);
  expect(challenge.status).toBe(402);
  const required = b.http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
  const original = structuredClone(required.accepts[0]!);
  change?.(required.accepts[0] as unknown as Record<string, unknown>);
  const payload = await b.http.createPaymentPayload(required);
  payload.accepted = original;
  const validBefore = Number((payload.payload as { authorization: { validBefore: string } }).authorization.validBefore);
  return { header: b.http.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] as string, validBefore, payload };
}

/** A response read whole, without the headers every answer gets afresh (its request id, its date). */
const answerOf = async (res: Response) => ({
  status: res.status,
  body: await res.text(),
  headers: Object.fromEntries([...res.headers].filter(([name]) => !["x-request-id", "date"].includes(name))),
});

/** A fetch that notes the payment credential its caller (a standard's client) sent, so the buyer can send it again. */
function recordingFetch(header: string) {
  const sent: string[] = [];
  const fetchAndNote = (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const credential = request.headers.get(header);
    if (credential) sent.push(credential);
    return fetch(request);
  };
  return { fetch: fetchAndNote as typeof fetch, sent };
}

const payX402 = (url: string, header: string) => fetch(url, { headers: { "PAYMENT-SIGNATURE": header } });

/** Each MPP payment needs a buyer of its own (test/localnet/README.md); 0 and 1 pay in the first tests. */
let nextTempoBuyer = 2;
const mppBuyer = () => {
  const tempo = stack.tempo as NonNullable<LocalStack["tempo"]>;
  return createMppBuyer({ privateKey: tempo.buyers[nextTempoBuyer++]?.privateKey as `0x${string}`, rpcUrl: tempo.rpcUrl });
};
const tempoBalance = (address: string) => (stack.tempo as NonNullable<LocalStack["tempo"]>).balanceOf(address as Address);

describe("the production bundle takes payments", () => {
  it("x402: the buyer pays, the upstream answers, the merchant gains exactly the price, the tenant sees it COMPLETED", async () => {
    const before = await usdcBalance(merchant);
    const res = await x402Buyer().fetch(`${x402Url}?q=x402`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { path: string; query: string }).path).toBe("/bundle/echo");
    const settled = paymentResponseOf(res);
    expect(settled?.success).toBe(true);
    expect(await usdcBalance(merchant)).toBe(before + BigInt(PRICE));
    const { transactions, eventTypes } = await history(paywallId, landed(1));
    expect(transactions).toEqual([
      expect.objectContaining({ protocol: "x402", status: "COMPLETED", txHash: settled?.transaction, amount: PRICE }),
    ]);
    expect(eventTypes).toEqual(["REQUEST", "SUCCESS"]);
  });

  it("MPP: mppx's client pays the tempo charge, the recipient gains exactly the price, the tenant sees it COMPLETED", async () => {
    const tempo = stack.tempo;
    if (!tempo) throw new Error("the local Tempo chain did not start");
    const before = await tempo.balanceOf(merchant);
    tempoRpcCalls.length = 0;
    const buyer = createMppBuyer({ privateKey: tempo.buyers[0]?.privateKey as `0x${string}`, rpcUrl: tempo.rpcUrl });
    const res = await buyer.fetch(`${mppUrl}?q=mpp`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { path: string }).path).toBe("/bundle/echo");
    const receipt = res.headers.get("Payment-Receipt");
    expect(receipt).toBeTruthy();
    expect(await tempo.balanceOf(merchant)).toBe(before + BigInt(PRICE));
    const mpp = (await history(paywallId, landed(2))).transactions.find((t) => t.protocol === "mpp");
    expect(mpp).toMatchObject({ status: "COMPLETED", amount: PRICE });
    expect(mpp?.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Before the upstream call, the gateway simulated the buyer's transaction as a Tempo transaction: an `eth_call`
    // from the buyer with its calls (a TIP-20 transfer of the price to the merchant). The chain's request formatter
    // writes `calls`; without it the simulation would be an empty call that any node accepts.
    const simulation = tempoRpcCalls.find((c) => c.method === "eth_call")?.params[0] as
      | { from?: string; calls?: { to: string; data: string }[] }
      | undefined;
    expect(simulation?.from?.toLowerCase()).toBe(buyer.address.toLowerCase());
    expect(simulation?.calls?.[0]?.to.toLowerCase()).toBe(tempo.currency.toLowerCase());
    expect(simulation?.calls?.[0]?.data).toContain(merchant.slice(2).toLowerCase());
    expect(tempoRpcCalls.map((c) => c.method)).toContain("eth_sendRawTransactionSync");
  });
});

describe("the production bundle refuses what it must not charge for", () => {
  it("MPP: a credential its buyer can no longer pay is refused with a 402 and charges nothing", async () => {
    const tempo = stack.tempo;
    if (!tempo) throw new Error("the local Tempo chain did not start");
    const key = tempo.buyers[1]?.privateKey as `0x${string}`;
    const buyer = createMppBuyer({ privateKey: key, rpcUrl: tempo.rpcUrl });
    const url = `${mppUrl}?q=drained`;
    const credential = await buyer.mppx.createCredential(await fetch(url));
    // The buyer spends the money elsewhere before sending the credential. (anvil's Tempo mode does not fail the
    // gateway's `eth_call` simulation for it, so the upstream is called; the broadcast then fails, and the payment ends
    // FAILED uncharged, as test/gateway/mpp.test.ts shows in detail. A real Tempo node refuses it at the simulation.)
    const wallet = createClient({
      account: privateKeyToAccount(key),
      chain: tempoChain(tempo.chainId, tempo.rpcUrl),
      transport: http(tempo.rpcUrl),
    });
    const left = await tempo.balanceOf(buyer.address);
    await Actions.token.transferSync(wallet, {
      token: tempo.currency,
      to: tempo.merchant.address,
      amount: left - 1000n,
      feeToken: tempo.currency,
    });
    const before = await tempo.balanceOf(merchant);
    const res = await fetch(url, { headers: { Authorization: credential } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("www-authenticate")).toMatch(/^Payment /);
    expect(res.headers.get("payment-receipt")).toBeNull();
    expect(await tempo.balanceOf(merchant)).toBe(before);
    const mpp = (await history(paywallId, landed(3))).transactions.filter((t) => t.protocol === "mpp");
    expect(mpp.map((t) => t.status).sort()).toEqual(["COMPLETED", "FAILED"]);
  });

  it("x402: a PAYMENT-SIGNATURE that is not a payment, or a payment for a smaller amount: 402, nothing forwarded or charged", async () => {
    const shop = await paywall("refusals");
    const before = await usdcBalance(merchant);
    const garbage = await payX402(shop.x402, "bm90IGEgcGF5bWVudA==");
    expect(garbage.status).toBe(402);
    expect(garbage.headers.get("PAYMENT-REQUIRED")).toBeTruthy();
    const smaller = await signedX402(shop.x402, (accepted) => {
      accepted.amount = "1";
    });
    expect((await payX402(shop.x402, smaller.header)).status).toBe(402);
    expect(await usdcBalance(merchant)).toBe(before);
    // Nothing was claimed, so no record is on its way: read at once.
    expect((await history(shop.id, () => true)).transactions).toEqual([]);
  });

  it("an upstream failure (503) reaches the buyer and charges nothing, over x402 and MPP: FAILED with the reason", async () => {
    const shop = await paywall("upstream-503", "/status/503");
    const balances = async () => [await usdcBalance(merchant), await tempoBalance(merchant)];
    const before = await balances();
    const x402 = await payX402(shop.x402, (await signedX402(shop.x402)).header);
    expect(x402.status).toBe(503);
    expect(x402.headers.get("PAYMENT-RESPONSE")).toBeNull();
    const mpp = await mppBuyer().fetch(shop.mpp);
    expect(mpp.status).toBe(503);
    expect(mpp.headers.get("payment-receipt")).toBeNull();
    expect(await balances()).toEqual(before);
    const { transactions, eventTypes } = await history(shop.id, landed(2));
    expect(transactions.map((t) => [t.protocol, t.status, t.failureReason]).sort()).toEqual([
      ["mpp", "FAILED", "upstream answered 503"],
      ["x402", "FAILED", "upstream answered 503"],
    ]);
    expect(eventTypes).toEqual(["ERROR", "ERROR", "REQUEST", "REQUEST"]);
  });
});

describe("the production bundle charges nothing for an upstream that does not answer in time", () => {
  it("a timeout: 504 in the error envelope, over x402 and MPP, FAILED with the reason, nothing settled", async () => {
    const shop = await paywall("upstream-slow", "/hang/3000/echo");
    await (await worker.db()).prepare("UPDATE paywalls SET timeout = 500 WHERE id = ?").bind(shop.id).run();
    const balances = async () => [await usdcBalance(merchant), await tempoBalance(merchant)];
    const before = await balances();
    const x402 = await payX402(shop.x402, (await signedX402(shop.x402)).header);
    expect(x402.status).toBe(504);
    expect(await x402.json()).toMatchObject({ code: "GATEWAY_TIMEOUT" });
    expect(x402.headers.get("PAYMENT-RESPONSE")).toBeNull();
    const mpp = await mppBuyer().fetch(shop.mpp);
    expect(mpp.status).toBe(504);
    expect(await mpp.json()).toMatchObject({ code: "GATEWAY_TIMEOUT" });
    expect(mpp.headers.get("payment-receipt")).toBeNull();
    expect(await balances()).toEqual(before);
    const { transactions, eventTypes } = await history(shop.id, landed(2));
    expect(transactions.map((t) => [t.protocol, t.status, t.failureReason]).sort()).toEqual([
      ["mpp", "FAILED", "upstream timed out after 500 ms"],
      ["x402", "FAILED", "upstream timed out after 500 ms"],
    ]);
    expect(eventTypes).toEqual(["ERROR", "ERROR", "REQUEST", "REQUEST"]);
  });
});

describe("the production bundle answers a payment every time it is presented, and charges it once", () => {
  it("x402 (@x402/fetch): the paid request sent again gets the same answer byte for byte, the same settlement, no second charge", async () => {
    const shop = await paywall("x402-resend");
    const before = await usdcBalance(merchant);
    const recording = recordingFetch("PAYMENT-SIGNATURE");
    const b = createX402Buyer({
      privateKey: stack.info.buyer.privateKey,
      network: stack.info.network,
      usdc: stack.info.usdc.address,
      fetch: recording.fetch,
    });
    const first = await answerOf(await b.fetch(`${shop.x402}?q=resend`));
    expect(first.status).toBe(200);
    expect(first.headers["payment-transaction-id"]).toMatch(/^txn_x402_/);
    const [header] = recording.sent;
    const again = await answerOf(await fetch(`${shop.x402}?q=resend`, { headers: { "PAYMENT-SIGNATURE": header as string } }));
    expect(again).toEqual(first);
    expect(paymentResponseOf(new Response(null, { headers: again.headers }))?.transaction).toBe(
      first.headers["payment-reference"],
    );
    expect(await usdcBalance(merchant)).toBe(before + BigInt(PRICE));
    expect((await history(shop.id)).transactions.map((t) => t.status)).toEqual(["COMPLETED"]);
  });

  it("x402: one payment sent ten times at once: ten 200s with one body, one settlement", async () => {
    const shop = await paywall("x402-ten", "/hang/300/echo");
    const before = await usdcBalance(merchant);
    const { header } = await signedX402(shop.x402);
    const answers = await Promise.all(Array.from({ length: 10 }, async () => answerOf(await payX402(shop.x402, header))));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(await usdcBalance(merchant)).toBe(before + BigInt(PRICE));
    expect((await history(shop.id)).transactions.map((t) => t.status)).toEqual(["COMPLETED"]);
  });

  it("x402: a payment-identifier reused for another request is 409; for the same request, the first answer, never a second charge", async () => {
    const shop = await paywall("x402-payment-id");
    const before = await usdcBalance(merchant);
    const id = generatePaymentId();
    const withId = () => {
      const b = x402Buyer();
      b.client.onBeforePaymentCreation(async ({ paymentRequired }) => {
        appendPaymentIdentifierToExtensions(paymentRequired.extensions ?? {}, id);
      });
      return b;
    };
    const first = await answerOf(await withId().fetch(`${shop.x402}?q=one`));
    expect(first.status).toBe(200);
    const other = await withId().fetch(`${shop.x402}?q=two`);
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ code: "CONFLICT", details: { reason: "other-request" } });
    // A retry of the first request under the same id (a new authorization): the first answer.
    expect(await answerOf(await withId().fetch(`${shop.x402}?q=one`))).toEqual(first);
    expect(await usdcBalance(merchant)).toBe(before + BigInt(PRICE));
    expect((await history(shop.id)).transactions.map((t) => t.status)).toEqual(["COMPLETED"]);
  });

  it("MPP (mppx's client): the paid request sent again gets the same answer and Payment-Receipt, no second charge", async () => {
    const shop = await paywall("mpp-resend");
    const before = await tempoBalance(merchant);
    const tempo = stack.tempo as NonNullable<LocalStack["tempo"]>;
    const recording = recordingFetch("Authorization");
    const buyer = createMppBuyer({
      privateKey: tempo.buyers[nextTempoBuyer++]?.privateKey as `0x${string}`,
      rpcUrl: tempo.rpcUrl,
      fetch: recording.fetch,
    });
    const first = await answerOf(await buyer.fetch(`${shop.mpp}?q=resend`));
    expect(first.status).toBe(200);
    expect(first.headers["payment-receipt"]).toBeTruthy();
    const credential = recording.sent.find((c) => /^Payment /i.test(c)) as string;
    const again = await answerOf(await fetch(`${shop.mpp}?q=resend`, { headers: { Authorization: credential } }));
    expect(again).toEqual(first);
    expect(await tempoBalance(merchant)).toBe(before + BigInt(PRICE));
    expect((await history(shop.id)).transactions.map((t) => t.status)).toEqual(["COMPLETED"]);
  });
});

describe("the production bundle when a settlement's answer is lost", () => {
  it("x402, settled but the answer lost: the token says used; the buyer gets the upstream's answer, COMPLETED", async () => {
    const shop = await paywall("x402-answer-lost");
    const before = await usdcBalance(merchant);
    const { header } = await signedX402(shop.x402);
    const res = await payX402(await behind("answer-lost", shop.x402), header);
    expect(faulted).toContain(`answer-lost.${GATEWAY_TEST_HOSTS.facilitator} /settle`);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect((JSON.parse(text) as { path: string }).path).toBe("/bundle/echo");
    const settled = paymentResponseOf(res);
    expect(settled).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await usdcBalance(merchant)).toBe(before + BigInt(PRICE));
    const { transactions, eventTypes } = await history(shop.id);
    expect(transactions).toEqual([expect.objectContaining({ status: "COMPLETED", txHash: settled?.transaction })]);
    expect(eventTypes).toEqual(["REQUEST", "SUCCESS"]);
  });

  it("MPP, sent but the answer lost: its receipt says it succeeded; the buyer gets the answer and a Payment-Receipt, COMPLETED", async () => {
    const shop = await paywall("mpp-answer-lost");
    const before = await tempoBalance(merchant);
    // The challenge of the copy behind the fault: an MPP challenge is bound to the payment origin that issued it.
    const url = await behind("answer-lost", shop.mpp);
    const credential = await mppBuyer().mppx.createCredential(await fetch(url));
    const res = await fetch(url, { headers: { Authorization: credential } });
    expect(faulted).toContain(`answer-lost.${GATEWAY_TEST_HOSTS.tempoRpc} eth_sendRawTransactionSync`);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect((JSON.parse(text) as { path: string }).path).toBe("/bundle/echo");
    expect(res.headers.get("payment-receipt")).toBeTruthy();
    expect(await tempoBalance(merchant)).toBe(before + BigInt(PRICE));
    const { transactions, eventTypes } = await history(shop.id);
    expect(transactions).toEqual([
      expect.objectContaining({ status: "COMPLETED", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }),
    ]);
    expect(eventTypes).toEqual(["REQUEST", "SUCCESS"]);
  });
});

// A payment its request left PENDING is swept by its own object, from its alarm, on the Worker's own clock: a minute
// after its answer was kept, then (not known yet) past its expiry (docs/gateway.md, "Its own sweep"). These cases wait
// for it in real time, side by side; the Cron sweep does not touch such a payment (nothing of it is in its table).
describe.concurrent("the production bundle when a settlement's answer is lost: the payment's object sweeps it", () => {
  it("x402, never settled and the answer lost: 502 PAYMENT_OUTCOME_UNKNOWN, PENDING; its sweep records FAILED once it expired", async () => {
    const shop = await paywall("x402-send-dropped");
    const buyer = await fundedX402Buyer(stack, 10n * BigInt(PRICE));
    const before = await usdcBalance(buyer.address);
    // An authorization valid 40 s (the least the gateway takes leaves the facilitator its 30 s): it expires soon.
    const { header, validBefore } = await signedX402(
      shop.x402,
      (accepted) => {
        accepted.maxTimeoutSeconds = 40;
      },
      buyer,
    );
    const res = await payX402(await behind("send-dropped", shop.x402), header);
    expect(faulted).toContain(`send-dropped.${GATEWAY_TEST_HOSTS.facilitator} /settle`);
    expect(res.status).toBe(502);
    expect(res.headers.get("PAYMENT-REQUIRED")).toBeNull();
    const body = (await res.json()) as { code: string; details: { transactionId: string } };
    expect(body.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect((await history(shop.id, landed(1, { settled: false }))).transactions).toEqual([
      expect.objectContaining({ id: body.details.transactionId, status: "PENDING", txHash: null }),
    ]);
    // Its object's sweep finds it unused: still valid, it stays PENDING; past its validBefore, FAILED.
    const { transactions, eventTypes } = await history(shop.id, landed(1), untilSwept(validBefore));
    expect(transactions).toEqual([
      expect.objectContaining({
        id: body.details.transactionId,
        status: "FAILED",
        failureReason: "the payment's authorization expired unused",
      }),
    ]);
    expect(eventTypes).toEqual(["ERROR", "REQUEST"]);
    expect(await usdcBalance(buyer.address)).toBe(before);
  }, 300_000);

  it("x402, never settled and the answer lost, then settled by its facilitator: its sweep records COMPLETED and the buyer's resend gets the answer", async () => {
    const shop = await paywall("x402-recovered");
    const buyer = await fundedX402Buyer(stack, 10n * BigInt(PRICE));
    const before = await usdcBalance(buyer.address);
    const { header, payload, validBefore } = await signedX402(shop.x402, undefined, buyer);
    const res = await payX402(await behind("send-dropped", shop.x402), header);
    expect(res.status).toBe(502);
    const { details } = (await res.json()) as { details: { transactionId: string } };
    // The facilitator sends the authorization after all (its answer was what got lost).
    const settled = await fetch(`${stack.info.facilitatorUrl}/settle`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted }),
    });
    expect(((await settled.json()) as { success: boolean }).success).toBe(true);
    const { transactions, eventTypes } = await history(shop.id, landed(1), untilSwept(validBefore));
    expect(transactions).toEqual([expect.objectContaining({ id: details.transactionId, status: "COMPLETED" })]);
    expect(eventTypes).toEqual(["REQUEST", "SUCCESS"]);
    const again = await payX402(shop.x402, header);
    const text = await again.text();
    expect(again.status, text).toBe(200);
    expect((JSON.parse(text) as { path: string }).path).toBe("/bundle/echo");
    expect(paymentResponseOf(again)).toMatchObject({ success: true, transaction: transactions[0]?.txHash });
    expect(again.headers.get("payment-reference")).toBe(transactions[0]?.txHash);
    expect(await usdcBalance(buyer.address)).toBe(before - BigInt(PRICE));
  }, 300_000);

  it("MPP, never sent and the answer lost: 502 PAYMENT_OUTCOME_UNKNOWN with the hash, PENDING; sent later, the sweep records COMPLETED", async () => {
    const tempo = stack.tempo as NonNullable<LocalStack["tempo"]>;
    const shop = await paywall("mpp-send-dropped");
    const before = await tempoBalance(merchant);
    // The challenge of the copy behind the fault: an MPP challenge is bound to the payment origin that issued it.
    const url = await behind("send-dropped", shop.mpp);
    const credential = await mppBuyer().mppx.createCredential(await fetch(url));
    const res = await fetch(url, { headers: { Authorization: credential } });
    expect(faulted).toContain(`send-dropped.${GATEWAY_TEST_HOSTS.tempoRpc} eth_sendRawTransactionSync`);
    expect(res.status).toBe(502);
    expect(res.headers.get("www-authenticate")).toBeNull();
    const body = (await res.json()) as { code: string; details: { transactionId: string; txHash: string } };
    expect(body).toMatchObject({
      code: "PAYMENT_OUTCOME_UNKNOWN",
      details: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
    });
    // mppx's client signs its transaction valid 25 s.
    const validBefore = Math.floor(Date.now() / 1000) + 25;
    expect((await history(shop.id, landed(1, { settled: false }))).transactions).toEqual([
      expect.objectContaining({ id: body.details.transactionId, status: "PENDING", txHash: body.details.txHash }),
    ]);
    expect(await tempoBalance(merchant)).toBe(before);
    // The buyer, who holds the signed transaction, sends it: its hash is the one on record, and the sweep settles it.
    const signed = (Credential.deserialize(credential).payload as { signature: `0x${string}` }).signature;
    const client = createClient({ chain: tempoChain(tempo.chainId, tempo.rpcUrl), transport: http(tempo.rpcUrl) });
    expect((await sendRawTransactionSync(client, { serializedTransaction: signed })).transactionHash).toBe(body.details.txHash);
    const { transactions, eventTypes } = await history(shop.id, landed(1), untilSwept(validBefore));
    expect(transactions).toEqual([
      expect.objectContaining({ id: body.details.transactionId, status: "COMPLETED", txHash: body.details.txHash }),
    ]);
    expect(eventTypes).toEqual(["REQUEST", "SUCCESS"]);
    expect(await tempoBalance(merchant)).toBe(before + BigInt(PRICE));
    // The buyer sends its credential again: the answer it paid for, with the receipt of that transaction.
    const again = await fetch(url, { headers: { Authorization: credential } });
    const text = await again.text();
    expect(again.status, text).toBe(200);
    expect((JSON.parse(text) as { path: string }).path).toBe("/bundle/echo");
    expect(again.headers.get("payment-receipt")).toBeTruthy();
    expect(again.headers.get("payment-reference")).toBe(body.details.txHash);
  }, 300_000);
});
