/**
 * An MPP buyer: mppx's own client with the `tempo` charge method and a viem local account, pointed at a (local) Tempo
 * RPC. No Node-only imports, so workerd tests can use it too (`rpcUrl: "https://tempo-rpc.gateway.test"`).
 */
import { Mppx, tempo } from "mppx/client";
import { createClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { tempoModerato } from "viem/chains";

export interface MppBuyerOptions {
  privateKey: Hex;
  rpcUrl: string;
  /** Default 42431 (tempo-testnet). */
  chainId?: number;
  /** `pull` (default for a local account: the server broadcasts) or `push` (the buyer broadcasts). */
  mode?: "pull" | "push";
  /** The fetch used for the paid request (default: the global fetch). RPC calls use the global fetch. */
  fetch?: typeof globalThis.fetch;
}

export function createMppBuyer(options: MppBuyerOptions) {
  const chainId = options.chainId ?? 42431;
  const chain = { ...tempoModerato, id: chainId, rpcUrls: { default: { http: [options.rpcUrl] } } };
  const account = privateKeyToAccount(options.privateKey);
  const mppx = Mppx.create({
    methods: [
      tempo.charge({
        account,
        getClient: () => createClient({ chain, transport: http(options.rpcUrl, { retryCount: 0 }) }),
        ...(options.mode ? { mode: options.mode } : {}),
      }),
    ],
    polyfill: false,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return { address: account.address, mppx, fetch: mppx.fetch };
}
