import { z } from "zod";
import type { Token } from "../../db/schema.ts";
import { NETWORK_IDS, type NetworkId } from "./networks.ts";

/**
 * Each network's chain and its USDC: what a 402 challenge names and what a payment is checked against.
 *
 * - `kind: "evm"` networks take x402 `exact` payments (EIP-3009 `transferWithAuthorization` on USDC, signed over
 *   the token's EIP-712 domain `name`/`version`).
 * - `kind: "tempo"` networks take MPP `tempo` charges in a TIP-20 token; they have no EIP-712 domain here.
 *
 * Sources (every address):
 * - [circle]  https://developers.circle.com/stablecoins/usdc-contract-addresses (Circle's list of USDC contracts)
 * - [x402]    @x402/evm `DEFAULT_ASSETS` (node_modules/@x402/evm/dist/esm/chunk-2UXXNYPA.mjs), which also gives
 *             the EIP-712 `name`/`version` the x402 clients sign with for Base and Base Sepolia
 * - [arc]     https://docs.arc.network/arc/references/contract-addresses (USDC's optional ERC-20 interface, 6 decimals)
 * - [viem]    viem/chains (`base`, `baseSepolia`, `hyperEvm`, `hyperliquidEvmTestnet`, `arcTestnet`, `tempo`,
 *             `tempoModerato`) for the chain ids
 * - [mppx]    mppx `tempo/internal/defaults` (`usdc` on Tempo mainnet 4217, `pathUsd` on Tempo testnet 42431)
 * - [explorer] viem/chains `blockExplorers.default.url` of the same chains (Basescan, HyperEVMScan, Arc Explorer, Tempo
 *             Explorer). viem lists none for HyperEVM testnet: no link there. The dashboard links `<url>/tx/<hash>` and
 *             `<url>/address/<address>`, the paths these explorers share.
 *
 * UNVERIFIED: the EIP-712 domain (`USDC`/`2`) of the HyperEVM, HyperEVM testnet and Arc testnet tokens. It is assumed
 * from Circle's FiatToken v2 (the domain of Base Sepolia's USDC), not read from a source: @x402/evm's
 * `DEFAULT_ASSETS` and coinbase/x402's network configs (snapshot of 2026-04-21) list no HyperEVM or Arc asset, Circle's
 * address page gives addresses but no domain, and these machines cannot call the chains' `name()`/`version()`. Only
 * third-party code was found (one HyperEVM-testnet x402 example signs with `USDC`/`2`). A wrong domain makes every
 * x402 signature on that network fail verification (no money moves); read `name()`/`version()` on chain before
 * enabling these networks for real payments, and correct the entry (or override it with `NETWORK_OVERRIDES`).
 *
 * `rpcUrl`: the chain's JSON-RPC endpoint. Tempo networks: what MPP verification simulates and broadcasts through.
 * EVM networks: where the gateway reads a payment's EIP-3009 `authorizationState` when a settlement's outcome is
 * unknown (the facilitator's answer was lost) and in the Cron sweep. Default: [viem] the chain's public RPC
 * (`rpcUrls.default.http[0]`), rate-limited and best effort: a deployment should override it with its own provider's
 * endpoint. A local chain overrides it with `NETWORK_OVERRIDES`, e.g. `{"tempo-testnet":{"rpcUrl":"http://127.0.0.1:9463"}}`.
 */
export interface NetworkEntry {
  kind: "evm" | "tempo";
  chainId: number;
  /** The token buyers pay in: USDC (or Tempo's USD stablecoin), 6 decimals. */
  asset: `0x${string}`;
  /** The token's symbol, as transactions record it: USDC everywhere but Tempo's testnet, which pays in pathUSD. */
  token: Token;
  /** EIP-712 domain of the token, for EIP-3009 signatures (EVM networks only). */
  eip712: { name: string; version: string } | null;
  /** JSON-RPC endpoint (Tempo: MPP verification and broadcast; EVM: settlement outcomes read from the token). */
  rpcUrl: string;
  /** The chain's block explorer (for links to transactions and addresses), or `null` when none is known. */
  explorerUrl: string | null;
}

export const NETWORK_TABLE: Record<NetworkId, NetworkEntry> = {
  // [viem] baseSepolia.id and public RPC; [circle][x402] USDC on Base Sepolia, domain USDC/2 [x402]
  "base-sepolia": {
    kind: "evm",
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    token: "USDC",
    eip712: { name: "USDC", version: "2" },
    rpcUrl: "https://sepolia.base.org",
    explorerUrl: "https://sepolia.basescan.org",
  },
  // [viem] base.id and public RPC; [circle][x402] USDC on Base, domain "USD Coin"/2 [x402]
  base: {
    kind: "evm",
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    token: "USDC",
    eip712: { name: "USD Coin", version: "2" },
    rpcUrl: "https://mainnet.base.org",
    explorerUrl: "https://basescan.org",
  },
  // [viem] hyperliquidEvmTestnet.id and public RPC; [circle] USDC on HyperEVM testnet; domain UNVERIFIED (see above)
  "hyperevm-testnet": {
    kind: "evm",
    chainId: 998,
    asset: "0x2B3370eE501B4a559b57D449569354196457D8Ab",
    token: "USDC",
    eip712: { name: "USDC", version: "2" },
    rpcUrl: "https://rpc.hyperliquid-testnet.xyz/evm",
    explorerUrl: null,
  },
  // [viem] hyperEvm.id and public RPC; [circle] USDC on HyperEVM; domain UNVERIFIED (see above)
  hyperevm: {
    kind: "evm",
    chainId: 999,
    asset: "0xb88339CB7199b77E23DB6E890353E22632Ba630f",
    token: "USDC",
    eip712: { name: "USDC", version: "2" },
    rpcUrl: "https://rpc.hyperliquid.xyz/evm",
    explorerUrl: "https://hyperevmscan.io",
  },
  // [viem] arcTestnet.id and public RPC; [arc][circle] USDC's ERC-20 interface on Arc testnet; domain UNVERIFIED (see above)
  "arc-testnet": {
    kind: "evm",
    chainId: 5042002,
    asset: "0x3600000000000000000000000000000000000000",
    token: "USDC",
    eip712: { name: "USDC", version: "2" },
    rpcUrl: "https://rpc.testnet.arc.io",
    explorerUrl: "https://explorer.testnet.arc.io",
  },
  // [viem] tempoModerato.id and public RPC; [mppx] pathUSD, the testnet's default MPP currency
  "tempo-testnet": {
    kind: "tempo",
    chainId: 42431,
    asset: "0x20c0000000000000000000000000000000000000",
    token: "pathUSD",
    eip712: null,
    rpcUrl: "https://rpc.moderato.tempo.xyz",
    explorerUrl: "https://explore.testnet.tempo.xyz",
  },
  // [viem] tempo.id and public RPC; [mppx] USDC on Tempo mainnet
  tempo: {
    kind: "tempo",
    chainId: 4217,
    asset: "0x20C000000000000000000000b9537d11c60E8b50",
    token: "USDC",
    eip712: null,
    rpcUrl: "https://rpc.tempo.xyz",
    explorerUrl: "https://explore.tempo.xyz",
  },
};

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "a 0x-prefixed 20-byte address");

/**
 * `NETWORK_OVERRIDES`: a JSON object replacing fields of table entries, for a local chain, e.g.
 * `{"base-sepolia":{"chainId":84532,"asset":"0x5FbDB2315678afecb367f032d93F642f64180aa3","eip712":{"name":"USDC","version":"2"}}}`.
 * Parsed once per environment; an invalid value fails the first request loudly.
 */
const OverridesSchema = z.partialRecord(
  z.enum(NETWORK_IDS),
  z.strictObject({
    chainId: z.int().positive().optional(),
    asset: Address.optional(),
    eip712: z.strictObject({ name: z.string().min(1), version: z.string().min(1) }).optional(),
    rpcUrl: z.url({ protocol: /^https?$/ }).optional(),
  }),
);

const cache = new WeakMap<object, Record<NetworkId, NetworkEntry>>();

/** The network table with the environment's `NETWORK_OVERRIDES` applied (an overridden network has no explorer). */
export function networkTable(env: object): Record<NetworkId, NetworkEntry> {
  let table = cache.get(env);
  if (!table) {
    const raw = (env as { NETWORK_OVERRIDES?: unknown }).NETWORK_OVERRIDES;
    const overrides =
      raw === undefined || raw === "" ? {} : OverridesSchema.parse(typeof raw === "string" ? JSON.parse(raw) : raw);
    table = { ...NETWORK_TABLE };
    // An overridden entry is a chain of its own (a local one): the public explorer knows none of its transactions.
    for (const [id, change] of Object.entries(overrides) as [NetworkId, Partial<NetworkEntry>][]) {
      table[id] = { ...table[id], ...change, explorerUrl: null };
    }
    cache.set(env, table);
  }
  return table;
}

/** The CAIP-2 id x402 uses for a network, e.g. `eip155:84532`. */
export const caip2 = (entry: NetworkEntry) => `eip155:${entry.chainId}` as const;

/** The network id whose chain has this CAIP-2 id, among `candidates`. */
export function networkOfCaip2(
  table: Record<NetworkId, NetworkEntry>,
  candidates: readonly string[],
  id: string,
): NetworkId | undefined {
  return (candidates as NetworkId[]).find((n) => table[n] && caip2(table[n]) === id);
}
