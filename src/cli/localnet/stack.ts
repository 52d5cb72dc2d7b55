/**
 * The whole local payment stack in one call: chain + token (startLocalnet), facilitator, upstream stub, and a Tempo
 * chain for MPP (startTempoLocalnet). Used by the vitest globalSetup of the gateway tests and by the dev loop.
 */
import { type FacilitatorOptions, type LocalFacilitator, startFacilitator } from "./facilitator.ts";
import { DEV_KEYS, type Localnet, type LocalnetInfo, type LocalnetOptions, localnetInfo, startLocalnet } from "./localnet.ts";
import { startTempoLocalnet, type TempoLocalnet, type TempoLocalnetInfo, tempoLocalnetInfo } from "./tempo.ts";
import { type LocalUpstream, startUpstream } from "./upstream.ts";

export interface StackOptions extends LocalnetOptions {
  facilitatorPort?: number;
  upstreamPort?: number;
  /** Also start a Tempo chain for MPP (anvil --network tempo). Default true. */
  tempo?: boolean;
  tempoPort?: number;
}

export interface LocalStack {
  localnet: Localnet;
  facilitator: LocalFacilitator;
  /** A second facilitator over the same chain, signing with a key of its own (failover between facilitators). */
  secondFacilitator: LocalFacilitator;
  upstream: LocalUpstream;
  tempo: TempoLocalnet | undefined;
  info: StackInfo;
  stop(): Promise<void>;
}

/** JSON-safe description of a running stack (what `inject("localnet")` returns in the gateway tests). */
export interface StackInfo extends LocalnetInfo {
  /** The local facilitator's own origin (`http://127.0.0.1:<port>`). */
  facilitatorUrl: string;
  /** The second facilitator's own origin. */
  secondFacilitatorUrl: string;
  /** The upstream stub's own origin. */
  upstreamUrl: string;
  /**
   * `NETWORK_OVERRIDES` for the Worker: the network whose chain id the local chain runs with, pointed at the local
   * token and its RPC (`{"base-sepolia":{"chainId":84532,"asset":"0x…","eip712":{"name":"USDC","version":"2"},
   * "rpcUrl":"https://rpc.gateway.test"}}`), and
   * `tempo-testnet`'s RPC at `https://tempo-rpc.gateway.test` when the Tempo chain runs.
   */
  networkOverrides: string;
  /** Our network id for the local chain's chain id (e.g. `base-sepolia`). */
  networkId: string;
  /** The local Tempo chain for MPP (chain id 42431 = `tempo-testnet`, currency pathUSD), unless disabled. */
  tempo: TempoLocalnetInfo | undefined;
}

const NETWORK_ID_BY_CHAIN: Record<number, string> = {
  84532: "base-sepolia",
  8453: "base",
  998: "hyperevm-testnet",
  999: "hyperevm",
  5042002: "arc-testnet",
};

export async function startStack(options: StackOptions = {}): Promise<LocalStack> {
  const localnet = await startLocalnet(options);
  const stops: (() => Promise<void>)[] = [localnet.stop];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const facilitatorOptions: FacilitatorOptions = {
      rpcUrl: localnet.rpcUrl,
      chainId: localnet.chainId,
      privateKey: localnet.facilitator.privateKey,
      port: options.facilitatorPort ?? 0,
    };
    const facilitator = await startFacilitator(facilitatorOptions);
    stops.push(facilitator.stop);
    const upstream = await startUpstream({ port: options.upstreamPort ?? 0 });
    stops.push(upstream.stop);
    const tempo = options.tempo === false ? undefined : await startTempoLocalnet({ port: options.tempoPort ?? 0 });
    if (tempo) stops.push(tempo.stop);
    const secondFacilitator = await startFacilitator({ ...facilitatorOptions, privateKey: DEV_KEYS.secondFacilitator, port: 0 });
    stops.push(secondFacilitator.stop);
    const networkId = NETWORK_ID_BY_CHAIN[localnet.chainId] ?? `eip155:${localnet.chainId}`;
    const info: StackInfo = {
      ...localnetInfo(localnet),
      facilitatorUrl: facilitator.url,
      secondFacilitatorUrl: secondFacilitator.url,
      upstreamUrl: upstream.url,
      networkId,
      tempo: tempo ? tempoLocalnetInfo(tempo) : undefined,
      networkOverrides: JSON.stringify({
        [networkId]: {
          chainId: localnet.chainId,
          asset: localnet.usdc.address,
          eip712: { name: localnet.usdc.name, version: localnet.usdc.version },
          // The Worker reads the token (settlement outcomes) through the outbound router (outbound.ts, `rpc`).
          rpcUrl: "https://rpc.gateway.test",
        },
        // The Worker reaches the local Tempo chain through the outbound router (outbound.ts, `tempoRpc`).
        ...(tempo ? { "tempo-testnet": { rpcUrl: "https://tempo-rpc.gateway.test" } } : {}),
      }),
    };
    return { localnet, facilitator, secondFacilitator, upstream, tempo, info, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
