/**
 * An x402 buyer: `@x402/fetch` around a `viem` local account, exactly as a buyer's own code would pay. No Node-only
 * imports, so workerd tests can use it too (wrap `SELF.fetch` or the global `fetch`).
 *
 * x402 clients refuse, by default, any asset that is not a known USDC deployment (spend controls); the local token
 * is opted in explicitly, capped at `maxAmount` micro-USDC per payment.
 */
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import type { Address, Hex } from "viem";
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
