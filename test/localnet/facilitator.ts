/**
 * A local x402 facilitator: `@x402/core`'s `x402Facilitator` with `@x402/evm`'s `exact` scheme, signing with a funded
 * local key, served over HTTP the way x402 v2 facilitators are (the shape `HTTPFacilitatorClient` calls):
 *
 * - `POST /verify`  `{ x402Version, paymentPayload, paymentRequirements }` → `VerifyResponse`
 * - `POST /settle`  same body → `SettleResponse` (submits `transferWithAuthorization` and waits for the receipt)
 * - `GET /supported` → `{ kinds, extensions, signers }`
 *
 * A request the facilitator cannot route (unknown scheme or network) answers 200 with `isValid: false` /
 * `success: false` and the reason, as the reference facilitators do. `GET /__facilitator/log` lists every verify and
 * settle call (nonce, payer, outcome) so tests can count settlements per payment.
 */

import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createWalletClient, type Hex, http, nonceManager, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type LocalServer, listen, readBody, sendJson } from "./http-server.ts";
import { localChain } from "./localnet.ts";

export interface FacilitatorOptions {
  rpcUrl: string;
  chainId: number;
  /** The key that submits settlements (it pays the gas). */
  privateKey: Hex;
  /** Default 0: the OS picks a free port. */
  port?: number;
}

export interface FacilitatorLogEntry {
  endpoint: "verify" | "settle";
  network: string | undefined;
  payer: string | undefined;
  /** The EIP-3009 authorization nonce, when the payload carries one. */
  nonce: string | undefined;
  ok: boolean;
  reason: string | undefined;
  transaction: string | undefined;
}

export interface LocalFacilitator extends LocalServer {
  address: Hex;
  network: `eip155:${number}`;
  log: FacilitatorLogEntry[];
}

interface FacilitatorRequest {
  x402Version?: number;
  paymentPayload?: PaymentPayload;
  paymentRequirements?: PaymentRequirements;
}

const nonceOf = (payload: PaymentPayload | undefined): string | undefined => {
  const auth = (payload?.payload as { authorization?: { nonce?: string } } | undefined)?.authorization;
  return auth?.nonce;
};

export async function startFacilitator(options: FacilitatorOptions): Promise<LocalFacilitator> {
  const account = privateKeyToAccount(options.privateKey, { nonceManager });
  const client = createWalletClient({
    account,
    chain: localChain(options.chainId, options.rpcUrl),
    transport: http(options.rpcUrl, { retryCount: 0 }),
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    getCode: (args) => client.getCode(args),
    readContract: (args) => client.readContract({ ...args, args: args.args ?? [] } as never),
    verifyTypedData: (args) => client.verifyTypedData(args as never),
    writeContract: (args) => client.writeContract({ ...args, args: args.args ?? [] } as never),
    sendTransaction: (args) => client.sendTransaction(args),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
  });
  const network = `eip155:${options.chainId}` as const;
  const facilitator = new x402Facilitator().register(network, new ExactEvmScheme(signer));
  const log: FacilitatorLogEntry[] = [];

  const server = await listen(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "GET" && path === "/supported") return sendJson(res, 200, facilitator.getSupported());
    if (req.method === "GET" && path === "/__facilitator/log") return sendJson(res, 200, log);
    if (req.method !== "POST" || (path !== "/verify" && path !== "/settle")) return sendJson(res, 404, { error: "not found" });

    let body: FacilitatorRequest;
    try {
      body = JSON.parse((await readBody(req)).toString("utf8")) as FacilitatorRequest;
    } catch {
      return sendJson(res, 400, { error: "body is not JSON" });
    }
    const { paymentPayload, paymentRequirements } = body;
    if (!paymentPayload || !paymentRequirements)
      return sendJson(res, 400, { error: "missing paymentPayload or paymentRequirements" });
    const entry = (ok: boolean, reason: string | undefined, payer: string | undefined, transaction?: string) =>
      log.push({
        endpoint: path === "/verify" ? "verify" : "settle",
        network: paymentRequirements.network,
        payer,
        nonce: nonceOf(paymentPayload),
        ok,
        reason,
        transaction,
      });

    if (path === "/verify") {
      let result: VerifyResponse;
      try {
        result = await facilitator.verify(paymentPayload, paymentRequirements);
      } catch (err) {
        result = { isValid: false, invalidReason: "unsupported_scheme", invalidMessage: (err as Error).message };
      }
      entry(result.isValid, result.invalidReason, result.payer);
      return sendJson(res, 200, result);
    }
    let result: SettleResponse;
    try {
      result = await facilitator.settle(paymentPayload, paymentRequirements);
    } catch (err) {
      result = {
        success: false,
        errorReason: "unsupported_scheme",
        errorMessage: (err as Error).message,
        transaction: "",
        network: paymentRequirements.network,
      };
    }
    entry(result.success, result.errorReason, result.payer, result.transaction || undefined);
    return sendJson(res, 200, result);
  }, options.port ?? 0);

  return { ...server, address: account.address, network, log };
}
