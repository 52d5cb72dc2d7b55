// The production bundle (`npm run build`: wrangler's bundling, what `npm run deploy` uploads) takes payments end to
// end, in workerd through Miniflare: an x402 buyer and an MPP buyer pay one paywall on the local chains, the upstream
// answers, the merchant's balances rise by exactly the price, and the tenant reads both transactions COMPLETED with
// their on-chain hashes. The workerd gateway tests cover the gateway's behaviour in depth on the same modules,
// unbundled; this proves the bundle that ships, as built, runs it.
import { type Address, createClient, createPublicClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { Actions } from "viem/tempo";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker } from "../browser/support/worker.ts";
import { createX402Buyer, paymentResponseOf } from "./buyer.ts";
import { createMppBuyer } from "./mpp-buyer.ts";
import { createOutboundRouter, GATEWAY_TEST_HOSTS } from "./outbound.ts";
import { type LocalStack, startStack } from "./stack.ts";
import { tempoChain } from "./tempo.ts";

const PORT = 8897;
const PRICE = "4321"; // 0.004321 USDC

let stack: LocalStack;
let worker: RunningWorker;
const merchant = privateKeyToAddress(generatePrivateKey());
let x402Url: string;
let mppUrl: string;

const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await fetch(`${worker.url}${path}`, {
    method: init.method ?? "GET",
    headers: { Authorization: `Bearer ${worker.key}`, "Content-Type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data: Record<string, unknown> & { paymentUrls?: Record<string, string> } },
  };
};

/** A payment URL as the Worker answers it here: the paywall's path on the local Worker's origin. */
const local = (paymentUrl: string) => `${worker.url}${new URL(paymentUrl).pathname}`;

/** The JSON-RPC calls the Worker sent to the Tempo chain. */
const tempoRpcCalls: { method: string; params: unknown[] }[] = [];

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
  worker = await startWorker({
    port: PORT,
    vars: {
      FACILITATOR_URL_TESTNET: `https://${GATEWAY_TEST_HOSTS.facilitator}`,
      NETWORK_OVERRIDES: stack.info.networkOverrides,
    },
    outboundService: async (request) => {
      if (new URL(request.url).hostname === GATEWAY_TEST_HOSTS.tempoRpc) {
        tempoRpcCalls.push(...[(await request.clone().json()) as (typeof tempoRpcCalls)[number]].flat());
      }
      return router(request);
    },
  });
  const db = await worker.db();
  await db
    .prepare("UPDATE tenants SET wallet_address = ?, tempo_wallet_address = NULL WHERE id = ?")
    .bind(merchant, worker.tenantId)
    .run();
  const networks = [stack.info.networkId, "tempo-testnet"];
  const service = await api("/v1/services", {
    method: "POST",
    body: {
      name: "Bundle stub",
      baseUrl: `https://${GATEWAY_TEST_HOSTS.upstream}/bundle`,
      authMethod: "none",
      authConfig: {},
      networks,
      mode: "testnet",
    },
  });
  expect(service.status).toBe(201);
  const paywall = await api("/v1/paywalls", {
    method: "POST",
    body: {
      slug: "bundle",
      name: "Bundle paywall",
      targetType: "ROUTE",
      targetRoute: "/echo",
      serviceId: service.body.data.id,
      price: PRICE,
      currency: "USDC",
      networks,
      fulfillmentMode: "PROXY",
    },
  });
  expect(paywall.status).toBe(201);
  const urls = paywall.body.data.paymentUrls ?? {};
  x402Url = local(urls.x402 as string);
  mppUrl = local(urls.mpp as string);
}, 240_000);

afterAll(async () => {
  await worker?.stop();
  await stack?.stop();
});

const transactions = async () =>
  (await api("/v1/transactions?limit=10")).body.data as unknown as {
    protocol: string;
    status: string;
    txHash: string | null;
    amount: string;
  }[];

describe("the production bundle takes payments", () => {
  it("x402: the buyer pays, the upstream answers, the merchant gains exactly the price, the tenant sees it COMPLETED", async () => {
    const usdc = createPublicClient({ transport: http(stack.info.rpcUrl) });
    const balance = () =>
      usdc.readContract({
        address: stack.info.usdc.address,
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [merchant as Address],
      });
    const before = await balance();
    const buyer = createX402Buyer({
      privateKey: stack.info.buyer.privateKey,
      network: stack.info.network,
      usdc: stack.info.usdc.address,
    });
    const res = await buyer.fetch(`${x402Url}?q=x402`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { path: string; query: string }).path).toBe("/bundle/echo");
    const settled = paymentResponseOf(res);
    expect(settled?.success).toBe(true);
    expect(await balance()).toBe(before + BigInt(PRICE));
    expect(await transactions()).toContainEqual(
      expect.objectContaining({ protocol: "x402", status: "COMPLETED", txHash: settled?.transaction, amount: PRICE }),
    );
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
    const mpp = (await transactions()).find((t) => t.protocol === "mpp");
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
    const mpp = (await transactions()).filter((t) => t.protocol === "mpp");
    expect(mpp.map((t) => t.status).sort()).toEqual(["COMPLETED", "FAILED"]);
  });
});
