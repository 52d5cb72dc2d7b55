/**
 * An x402 buyer: `@x402/fetch` around a `viem` local account, exactly as a buyer's own code would pay. No Node-only
 * imports, so workerd tests can use it too (wrap `SELF.fetch` or the global `fetch`).
 *
 * x402 clients refuse, by default, any asset that is not a known USDC deployment (spend controls); the local token
 * is opted in explicitly, capped at `maxAmount` micro-USDC per payment.
 */
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { Network } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { type Address, createPublicClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface X402BuyerOptions {
  privateKey: Hex;
  network: Network;
  usdc: Address;
  /** Per-payment cap in micro-USDC (decimal string). Default 10 USDC. */
  maxAmount?: string;
  /** The fetch to wrap (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
}

export interface X402Buyer {
  address: Address;
  client: x402Client;
  http: x402HTTPClient;
  /** Pays a 402 answer and retries once, as `@x402/fetch` does. */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
}

export function createX402Buyer(options: X402BuyerOptions): X402Buyer {
  const account = privateKeyToAccount(options.privateKey);
  const client = new x402Client().register(options.network, new ExactEvmScheme(account)).setSpendControls({
    allowedAssets: [{ network: options.network, asset: options.usdc, maxAmountPerPayment: options.maxAmount ?? "10000000" }],
  });
  const base = options.fetch ?? globalThis.fetch;
  return {
    address: account.address,
    client,
    http: new x402HTTPClient(client),
    fetch: wrapFetchWithPayment((input, init) => base(input, init), client),
  };
}

/** The settlement answer (`PAYMENT-RESPONSE` header) of a paid response, decoded; undefined when absent. */
export function paymentResponseOf(response: Response) {
  const header = response.headers.get("PAYMENT-RESPONSE");
  return header ? decodePaymentResponseHeader(header) : undefined;
}

export interface X402SessionBuyerOptions extends X402BuyerOptions {
  /** The chain's RPC: the client reads its channel's state there (recovery, refunds, corrective 402s). */
  rpcUrl: string;
  /** What the first call deposits, in micro-USDC (at least the paywall's minimum deposit). */
  deposit: bigint;
}

/**
 * A session buyer: `@x402/evm`'s batch-settlement client through `@x402/fetch`, as a buyer's own code would pay. The
 * first call deposits `deposit` into a channel (or the paywall's minimum, if higher); each further call signs a
 * voucher only. `scheme.refund(url)` asks for what is left of the deposit back.
 */
export function createX402SessionBuyer(options: X402SessionBuyerOptions) {
  const account = privateKeyToAccount(options.privateKey);
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(options.rpcUrl) }));
  const scheme = new BatchSettlementEvmScheme(signer, {
    rpcUrl: options.rpcUrl,
    depositStrategy: ({ minimumDepositAmount }) =>
      (BigInt(minimumDepositAmount) > options.deposit ? BigInt(minimumDepositAmount) : options.deposit).toString(),
  });
  const cap = options.maxAmount ?? options.deposit.toString();
  const client = new x402Client().register(options.network, scheme).setSpendControls({
    allowedAssets: [{ network: options.network, asset: options.usdc, maxAmountPerPayment: cap }],
  });
  const base = options.fetch ?? globalThis.fetch;
  return {
    address: account.address,
    scheme,
    fetch: wrapFetchWithPayment((input, init) => base(input, init), client),
  };
}
