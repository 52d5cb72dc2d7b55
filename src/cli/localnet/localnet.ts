/**
 * `startLocalnet()`: a local EVM chain with a USDC stand-in, funded for a buyer.
 *
 * anvil runs with the chain id of one of our networks (84532, base-sepolia, by default), so the gateway's network
 * table only needs the token address overridden. TestUSDC (./contracts) is deployed and minted to the buyer; Multicall3
 * is installed at its canonical address (the facilitator's diagnostics use it), and so are the stand-ins of x402's
 * batch-settlement contracts (./contracts/BatchSettlement.sol: the channel contract and its ERC-3009 deposit collector,
 * at the addresses @x402/evm expects; they have no constructor state, so their runtime code is all they need).
 * Every key here is one of anvil's well-known development keys (mnemonic "test test … junk"): public, never a real secret.
 */
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from "@x402/evm";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
  parseUnits,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { startAnvil } from "./anvil.ts";
import { loadArtifacts } from "./contracts.ts";

/** anvil's default accounts 0-4 (mnemonic "test test test test test test test test test test test junk"). */
export const DEV_KEYS = {
  deployer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  buyer: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  merchant: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  facilitator: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  /** The second local facilitator's (stack.ts): a key of its own, so the two never race for a transaction nonce. */
  secondFacilitator: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
} as const satisfies Record<string, Hex>;

/** Multicall3's address on every chain (https://github.com/mds1/multicall3#deployments). */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

export interface LocalAccount {
  address: Address;
  privateKey: Hex;
}

export interface LocalnetOptions {
  /** Default 84532 (base-sepolia). */
  chainId?: number;
  /** Default 0: the OS picks a free port. */
  port?: number;
  /** Micro-USDC minted to the buyer at start. Default 1,000 USDC. */
  buyerFunds?: bigint;
}

/** What a test or the dev loop needs to know; plain JSON-safe data (amounts as decimal strings). */
export interface LocalnetInfo {
  rpcUrl: string;
  chainId: number;
  /** CAIP-2, e.g. `eip155:84532`. */
  network: `eip155:${number}`;
  usdc: { address: Address; name: "USDC"; version: "2"; decimals: 6 };
  buyer: LocalAccount;
  merchant: LocalAccount;
  facilitator: LocalAccount;
  deployer: LocalAccount;
}

export interface Localnet extends LocalnetInfo {
  client: PublicClient;
  balanceOf(address: Address): Promise<bigint>;
  mint(to: Address, amount: bigint): Promise<void>;
  stop(): Promise<void>;
}

const account = (privateKey: Hex): LocalAccount => ({ address: privateKeyToAccount(privateKey).address, privateKey });

export function localChain(chainId: number, rpcUrl: string) {
  return defineChain({
    id: chainId,
    name: `Local chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export async function startLocalnet(options: LocalnetOptions = {}): Promise<Localnet> {
  const chainId = options.chainId ?? 84532;
  const artifacts = loadArtifacts();
  const anvil = await startAnvil({ chainId, port: options.port ?? 0 });
  try {
    const chain = localChain(chainId, anvil.rpcUrl);
    const transport = http(anvil.rpcUrl, { retryCount: 0 });
    const client = createPublicClient({ chain, transport }) as PublicClient;
    const deployer = createWalletClient({ account: privateKeyToAccount(DEV_KEYS.deployer), chain, transport });

    await client.request({
      method: "anvil_setCode" as never,
      params: [MULTICALL3_ADDRESS, artifacts.Multicall3.deployedBytecode] as never,
    });
    for (const [address, artifact] of [
      [BATCH_SETTLEMENT_ADDRESS, artifacts.BatchSettlement],
      [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, artifacts.ERC3009DepositCollector],
    ] as const) {
      await client.request({ method: "anvil_setCode" as never, params: [address, artifact.deployedBytecode] as never });
    }
    const deployHash = await deployer.deployContract({ abi: artifacts.TestUSDC.abi, bytecode: artifacts.TestUSDC.bytecode });
    const deployed = await client.waitForTransactionReceipt({ hash: deployHash });
    if (!deployed.contractAddress) throw new Error("TestUSDC deployment returned no address");
    const usdc = deployed.contractAddress;

    const balanceOf = (address: Address) =>
      client.readContract({
        address: usdc,
        abi: artifacts.TestUSDC.abi,
        functionName: "balanceOf",
        args: [address],
      }) as Promise<bigint>;
    const mint = async (to: Address, amount: bigint) => {
      const hash = await deployer.writeContract({
        address: usdc,
        abi: artifacts.TestUSDC.abi,
        functionName: "mint",
        args: [to, amount],
      });
      const receipt = await client.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new Error(`mint to ${to} failed`);
    };

    const buyer = account(DEV_KEYS.buyer);
    await mint(buyer.address, options.buyerFunds ?? parseUnits("1000", 6));

    return {
      rpcUrl: anvil.rpcUrl,
      chainId,
      network: `eip155:${chainId}`,
      usdc: { address: usdc, name: "USDC", version: "2", decimals: 6 },
      buyer,
      merchant: account(DEV_KEYS.merchant),
      facilitator: account(DEV_KEYS.facilitator),
      deployer: account(DEV_KEYS.deployer),
      client,
      balanceOf,
      mint,
      stop: anvil.stop,
    };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}

/** The JSON-safe part of a running localnet (for `provide()` and files). */
export function localnetInfo(net: Localnet): LocalnetInfo {
  const { rpcUrl, chainId, network, usdc, buyer, merchant, facilitator, deployer } = net;
  return { rpcUrl, chainId, network, usdc, buyer, merchant, facilitator, deployer };
}
