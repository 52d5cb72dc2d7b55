// The local Tempo chain as the gateway's MPP tests reach it: through the outbound router, at the host the Worker's
// network table points `tempo-testnet` at (src/cli/localnet/stack.ts), and the token balances the tests assert.
import { env } from "cloudflare:workers";
import { createClient, http } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { tempoModerato } from "viem/chains";
import { Actions } from "viem/tempo";
import { net, openShop, type ShopOptions } from "./support.ts";

export const TEMPO_RPC = "https://tempo-rpc.gateway.test";
export const tempo = (() => {
  if (!net.tempo) throw new Error("the gateway tests' local stack started no Tempo chain (src/cli/localnet/stack.ts)");
  return net.tempo;
})();
export const tempoChain = { ...tempoModerato, id: tempo.chainId, rpcUrls: { default: { http: [TEMPO_RPC] } } };
export const tempoClient = createClient({ chain: tempoChain, transport: http(TEMPO_RPC, { retryCount: 0 }) });

/** An account's balance of the token MPP charges are paid in (pathUSD), in micro-units. */
export const tempoBalanceOf = async (address: string) =>
  (await Actions.token.getBalance(tempoClient, { token: tempo.currency, account: address as `0x${string}` })).amount;

/** Sets the tenant's Tempo wallet (where MPP charges go): `address`, or a fresh one. Returns it. */
export async function setTempoWallet(tenantId: string, address: string = privateKeyToAddress(generatePrivateKey())) {
  await env.DB.prepare("UPDATE tenants SET tempo_wallet_address = ? WHERE id = ?").bind(address, tenantId).run();
  return address;
}

/** A shop on the Tempo testnet whose tenant's Tempo wallet is fresh (so balance assertions never race). */
export async function mppShop(options: ShopOptions = {}) {
  const shop = await openShop({ networks: ["tempo-testnet"], ...options });
  const recipient = await setTempoWallet(shop.actor.tenant.id);
  return { ...shop, mpp: shop.mpp as string, recipient };
}
