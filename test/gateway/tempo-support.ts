// The local Tempo chain as the gateway's MPP tests reach it: through the outbound router, at the host the Worker's
// network table points `tempo-testnet` at (test/localnet/stack.ts), and the token balances the tests assert.
import { createClient, http } from "viem";
import { tempoModerato } from "viem/chains";
import { Actions } from "viem/tempo";
import { net } from "./support.ts";

export const TEMPO_RPC = "https://tempo-rpc.gateway.test";
export const tempo = (() => {
  if (!net.tempo) throw new Error("the gateway tests' local stack started no Tempo chain (test/localnet/stack.ts)");
  return net.tempo;
})();
export const tempoChain = { ...tempoModerato, id: tempo.chainId, rpcUrls: { default: { http: [TEMPO_RPC] } } };
export const tempoClient = createClient({ chain: tempoChain, transport: http(TEMPO_RPC, { retryCount: 0 }) });

/** An account's balance of the token MPP charges are paid in (pathUSD), in micro-units. */
export const tempoBalanceOf = async (address: string) =>
  (await Actions.token.getBalance(tempoClient, { token: tempo.currency, account: address as `0x${string}` })).amount;
