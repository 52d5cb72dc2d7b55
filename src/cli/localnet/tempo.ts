/**
 * A local Tempo chain for MPP: anvil's tempo mode (`anvil --network tempo`), offline. It ships Tempo's TIP-20
 * precompiles (pathUSD at 0x20c0…0000, fee manager, …) with anvil's development accounts pre-funded in them, and
 * accepts Tempo transactions (type 0x76), so mppx's `tempo` charge runs against it unchanged, in both modes:
 * `pull` (the buyer signs, the server simulates and broadcasts) and `push` (the buyer broadcasts, the server reads the
 * receipt).
 *
 Two quirks of anvil 1.7.1's tempo mode, measured here:
 * - until a block is mined, it simulates `eth_call` against block timestamp 1, so a Tempo transaction's `validAfter`
 *   (viem sets a random past time) looks "not valid yet". Any mined block fixes it: one `evm_mine` at start
 *   (the buyers' funding transfers below mine blocks too).
 * - it mines only the FIRST expiring-nonce transaction (`nonceKey` 2^256-1, what mppx's client always signs) of an
 *   account; a second one from the same account is silently never mined (the RPC call times out). So every MPP
 *   payment needs its own buyer account: `buyers` are fresh keys funded at start (100 pathUSD each, sent with
 *   ordinary protocol nonces, which work), one per payment. (On Tempo itself, expiring nonces are reusable.)
 *
 * Chain id 42431 by default: `tempo-testnet` (Moderato) in our network table, whose currency is pathUSD, the same
 * address here.
 */
import { type Address, createClient, defineChain, type Hex, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { tempoModerato } from "viem/chains";
import { Actions, Addresses } from "viem/tempo";
import { startAnvil } from "./anvil.ts";
import { DEV_KEYS, type LocalAccount } from "./localnet.ts";

export interface TempoLocalnetInfo {
  rpcUrl: string;
  chainId: number;
  /** The TIP-20 token charges are paid in: pathUSD (6 decimals). */
  currency: Address;
  /** Fresh funded accounts, one per MPP payment (see above). */
  buyers: LocalAccount[];
  merchant: LocalAccount;
}

export interface TempoLocalnet extends TempoLocalnetInfo {
  balanceOf(address: Address): Promise<bigint>;
  stop(): Promise<void>;
}

export function tempoChain(chainId: number, rpcUrl: string) {
  return defineChain({ ...tempoModerato, id: chainId, rpcUrls: { default: { http: [rpcUrl] } } });
}

const account = (privateKey: Hex): LocalAccount => ({ address: privateKeyToAccount(privateKey).address, privateKey });

export async function startTempoLocalnet(
  options: { chainId?: number; port?: number; buyers?: number } = {},
): Promise<TempoLocalnet> {
  const chainId = options.chainId ?? 42431;
  const anvil = await startAnvil({ chainId, port: options.port ?? 0, args: ["--network", "tempo"] });
  try {
    const client = createClient({ chain: tempoChain(chainId, anvil.rpcUrl), transport: http(anvil.rpcUrl, { retryCount: 0 }) });
    await client.request({ method: "evm_mine" as never });
    const currency = Addresses.pathUsd as Address;
    const funder = createClient({
      account: privateKeyToAccount(DEV_KEYS.deployer),
      chain: tempoChain(chainId, anvil.rpcUrl),
      transport: http(anvil.rpcUrl, { retryCount: 0 }),
    });
    const buyers = Array.from({ length: options.buyers ?? 24 }, () => account(generatePrivateKey()));
    for (const buyer of buyers) {
      await Actions.token.transferSync(funder, { token: currency, to: buyer.address, amount: 100_000_000n });
    }
    return {
      rpcUrl: anvil.rpcUrl,
      chainId,
      currency,
      buyers,
      merchant: account(DEV_KEYS.merchant),
      balanceOf: async (address) => (await Actions.token.getBalance(client, { token: currency, account: address })).amount,
      stop: anvil.stop,
    };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}

export function tempoLocalnetInfo(net: TempoLocalnet): TempoLocalnetInfo {
  const { rpcUrl, chainId, currency, buyers, merchant } = net;
  return { rpcUrl, chainId, currency, buyers, merchant };
}
