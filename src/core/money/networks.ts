import type { Mode } from "../../db/schema.ts";

export const NETWORKS_BY_MODE = {
  testnet: ["arc-testnet", "base-sepolia", "hyperevm-testnet", "tempo-testnet"],
  mainnet: ["base", "hyperevm", "tempo"],
} as const satisfies Record<Mode, readonly string[]>;

export const NETWORK_IDS = [...NETWORKS_BY_MODE.testnet, ...NETWORKS_BY_MODE.mainnet] as const;
export type NetworkId = (typeof NETWORK_IDS)[number];

export const modeOfNetwork = (network: string): Mode | undefined =>
  (NETWORKS_BY_MODE.testnet as readonly string[]).includes(network)
    ? "testnet"
    : (NETWORKS_BY_MODE.mainnet as readonly string[]).includes(network)
      ? "mainnet"
      : undefined;

/** Networks of the list that do not belong to `mode`. */
export const networksOutsideMode = (networks: readonly string[], mode: Mode) => networks.filter((n) => modeOfNetwork(n) !== mode);

/** The one mode shared by every network of the list, or `undefined` if they mix modes (or the list is empty). */
export function commonMode(networks: readonly string[]): Mode | undefined {
  const modes = new Set(networks.map(modeOfNetwork));
  const [only] = modes;
  return modes.size === 1 ? only : undefined;
}

/** The MPP payment URL needs Tempo in either mode. */
export const supportsMpp = (networks: readonly string[]) => networks.includes("tempo") || networks.includes("tempo-testnet");

/** x402 (and its sessions) needs an EVM network: any but Tempo. */
export const supportsX402 = (networks: readonly string[]) => networks.some((n) => n !== "tempo" && n !== "tempo-testnet");
