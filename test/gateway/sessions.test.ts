// x402 sessions (`batch-settlement`) at the gateway, end to end: the official client (`BatchSettlementEvmScheme` through
// `@x402/fetch`) deposits once through the local facilitator and then pays each call by voucher only, each served by
// the channel's Durable Object in one call; the charge is committed only when the upstream answered below 400.
import { env } from "cloudflare:workers";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, createWalletClient, defineChain, erc20Abi, type Hex, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { channelObjectName } from "../../src/core/sessions/channel-storage.ts";
import { send } from "../support/client.ts";
import {
  balanceOf,
  FACILITATOR,
  GATEWAY_ENV,
  gatewayFetch,
  net,
  openShop,
  type Shop,
  UPSTREAM,
  upstreamRequests,
} from "./support.ts";

const PRICE = 1_000n;
const FUNDS = 1_000_000n;
/** The paywalls' least deposit: enough for 20 calls. */
const DEPOSIT = 20n * PRICE;
const AUTHORIZER = privateKeyToAccount(`0x${"5e".repeat(32)}`).address;
const RPC = "https://rpc.gateway.test";

const localChain = defineChain({
  id: net.chainId,
  name: "local",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [RPC] } },
});
const chain = createPublicClient({ chain: localChain, transport: http(RPC) });
const mintAbi = [
  ...erc20Abi,
  {
    type: "function",
    name: "mint",
    stateMutability: "nonpayable",
    inputs: [
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
    ],
    outputs: [],
  },
] as const;

/** A paywall with sessions on (set as its owner's API would: in its row). */
async function sessionShop(options: { price?: bigint; minDeposit?: bigint | null } = {}): Promise<Shop> {
  const shop = await openShop({ price: (options.price ?? PRICE).toString() });
  await env.DB.prepare("UPDATE paywalls SET sessions_enabled = 1, sessions_min_deposit = ? WHERE id = ?")
    .bind(options.minDeposit === undefined ? DEPOSIT.toString() : (options.minDeposit?.toString() ?? null), shop.paywallId)
    .run();
  return shop;
}

/** A buyer of its own with 1 USDC, paying through the official client; every `PAYMENT-SIGNATURE` it sends is kept. */
async function sessionBuyer(envOverrides: Partial<Env> = GATEWAY_ENV) {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.request({ method: "anvil_setBalance" as never, params: [account.address, "0xde0b6b3a7640000"] as never });
  const wallet = createWalletClient({ account, chain: localChain, transport: http(RPC) });
  const hash = await wallet.writeContract({
    address: net.usdc.address,
    abi: mintAbi,
    functionName: "mint",
    args: [account.address, FUNDS],
  });
  expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain), { rpcUrl: RPC });
  const client = new x402Client().register(net.network, scheme).setSpendControls({
    allowedAssets: [{ network: net.network, asset: net.usdc.address, maxAmountPerPayment: "100000" }],
  });
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const signature = request.headers.get("PAYMENT-SIGNATURE");
    if (signature) sent.push(signature);
    return send(request, envOverrides);
  };
  return { account, scheme, sent, fetch: wrapFetchWithPayment(recording, client) };
}

const receiptOf = (res: Response) => {
  const header = res.headers.get("PAYMENT-RESPONSE");
  return header ? decodePaymentResponseHeader(header) : undefined;
};
const channelIdOf = (res: Response) =>
  (receiptOf(res)?.extra as { channelState?: { channelId: Hex } }).channelState?.channelId as Hex;

/** The channel's object, as the gateway names it. */
const channelObject = (shop: Shop, channelId: string) =>
  env.CHANNELS.getByName(channelObjectName(net.network, shop.merchant, channelId));
const chargedOn = async (shop: Shop, channelId: string) => {
  const { record } = await channelObject(shop, channelId).state();
  return record === null ? undefined : (JSON.parse(record) as { chargedCumulativeAmount: string }).chargedCumulativeAmount;
};

const facilitatorCalls = async () => ((await (await fetch(`${FACILITATOR}/__facilitator/log`)).json()) as unknown[]).length;

/** A paid call's URL at the shop: the query tells the calls apart in the upstream's records. */
const call = (shop: Shop, n: number | string) => `${shop.x402}?call=${n}`;

describe("a session paid by the official client", () => {
  it("offers batch-settlement beside exact, with the platform's receiver authorizer and the least deposit", async () => {
    const shop = await sessionShop({ minDeposit: 5_000n });
    const res = await gatewayFetch(shop.x402);
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.accepts.map((a) => a.scheme)).toEqual(["exact", "batch-settlement"]);
    expect(required.accepts[1]).toMatchObject({ amount: PRICE.toString(), payTo: shop.merchant, network: net.network });
    expect(required.accepts[1]?.extra).toMatchObject({ receiverAuthorizer: AUTHORIZER, minDeposit: "5000" });
    expect(JSON.stringify(required)).not.toContain("5e5e5e");
  });

  it("deposits once through the facilitator, then pays each call by voucher only, each answered by the upstream", async () => {
    const shop = await sessionShop();
    const b = await sessionBuyer();
    const before = await balanceOf(b.account.address);
    const first = await b.fetch(call(shop, 1));
    expect(first.status, await first.clone().text()).toBe(200);
    const opened = receiptOf(first);
    expect(opened?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const deposit = BigInt(opened?.amount ?? "0");
    expect(deposit).toBe(DEPOSIT);
    expect(await balanceOf(b.account.address)).toBe(before - deposit);
    const channelId = channelIdOf(first);

    const facilitatorBefore = await facilitatorCalls();
    for (let n = 2; n <= 5; n++) {
      const res = await b.fetch(call(shop, n));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { query: string }).query).toContain(`call=${n}`);
      expect(receiptOf(res)).toMatchObject({ success: true, transaction: "" });
    }
    expect(await facilitatorCalls()).toBe(facilitatorBefore);
    expect(await balanceOf(b.account.address)).toBe(before - deposit);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(5);
    expect(await chargedOn(shop, channelId)).toBe((5n * PRICE).toString());
  });
});
