/**
 * What the session tests at the gateway share (test/gateway/sessions.test.ts, session-e2e.test.ts): the local chain as
 * the Worker reaches it, and a buyer of its own paying through the official batch-settlement client.
 */
import { x402Client } from "@x402/core/client";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, createWalletClient, defineChain, http, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import { send } from "../support/client.ts";
import { GATEWAY_ENV, net } from "./support.ts";

export const RPC = "https://rpc.gateway.test";

export const localChain = defineChain({
  id: net.chainId,
  name: "local",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [RPC] } },
});
export const chain = createPublicClient({ chain: localChain, transport: http(RPC), cacheTime: 0 });
const mintAbi = parseAbi(["function mint(address to, uint256 value)"]);

/**
 * A buyer of its own with `funds` of the token and gas, paying through the official client (spending at most `cap`
 * in one payment) at the Worker with `envOverrides`; every `PAYMENT-SIGNATURE` it sends is kept in `sent`.
 */
export async function sessionBuyer(options: { funds: bigint; cap: string; envOverrides?: Partial<Env> }) {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.request({ method: "anvil_setBalance" as never, params: [account.address, "0xde0b6b3a7640000"] as never });
  const wallet = createWalletClient({ account, chain: localChain, transport: http(RPC) });
  const hash = await wallet.writeContract({
    address: net.usdc.address,
    abi: mintAbi,
    functionName: "mint",
    args: [account.address, options.funds],
  });
  expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain), { rpcUrl: RPC });
  const client = new x402Client().register(net.network, scheme).setSpendControls({
    allowedAssets: [{ network: net.network, asset: net.usdc.address, maxAmountPerPayment: options.cap }],
  });
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const signature = request.headers.get("PAYMENT-SIGNATURE");
    if (signature) sent.push(signature);
    return send(request, options.envOverrides ?? GATEWAY_ENV);
  };
  return { account, scheme, sent, fetch: wrapFetchWithPayment(recording, client) };
}
