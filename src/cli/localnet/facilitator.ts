/**
 * A local x402 facilitator: `@x402/core`'s `x402Facilitator` with `@x402/evm`'s `exact` and `batch-settlement`
 * schemes, signing with a funded local key, served over HTTP the way x402 v2 facilitators are (the shape `HTTPFacilitatorClient` calls):
 *
 * - `POST /verify`  `{ x402Version, paymentPayload, paymentRequirements }` → `VerifyResponse`
 * - `POST /settle`  same body → `SettleResponse` (submits `transferWithAuthorization` and waits for the receipt)
 * - `GET /supported` → `{ kinds, extensions, signers }`
 *
 * A request the facilitator cannot route (unknown scheme or network) answers 200 with `isValid: false` /
 * `success: false` and the reason, as the reference facilitators do; a settlement that throws past that point answers
 * `settlement_pending` (its transaction may have been sent), never a refusal. `GET /__facilitator/log` lists every verify and
 * settle call (nonce, payer, outcome) so tests can count settlements per payment.
 *
 * Bazaar, as a cataloguing facilitator does it: a settled payment that echoes the 402's `bazaar` extension is
 * validated with `@x402/extensions`' own validator (ajv, in Node) and catalogued when valid; the settle answer says
 * so in `EXTENSION-RESPONSES` (base64 JSON `{"bazaar":{"status":"success"}}`, or `"rejected"` with the reason).
 * `GET /__facilitator/bazaar` lists what was catalogued.
 */

import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { extractDiscoveryInfo, validateDiscoveryExtension } from "@x402/extensions/bazaar";
import { createWalletClient, type Hex, http, keccak256, nonceManager, publicActions, toHex } from "viem";
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
  /** What settled payments' Bazaar extensions catalogued. */
  catalogue: NonNullable<ReturnType<typeof extractDiscoveryInfo>>[];
}

interface FacilitatorRequest {
  x402Version?: number;
  paymentPayload?: PaymentPayload;
  paymentRequirements?: PaymentRequirements;
}

/**
 * Settlement faults, chosen by a path prefix of the facilitator URL (`<url>/__fault/<mode>/settle`):
 * - `settlement-pending`: settles on chain, then answers 200 `settlement_pending` with the transaction's hash (what
 *   `@x402/evm` answers when its receipt wait fails after the broadcast). A retry of the same payment settles nothing
 *   more (the authorization is used).
 * - `settlement-pending-unsent`: answers 200 `settlement_pending` with a hash, sends nothing (a broadcast dropped
 *   from the mempool).
 * - `settle-refused`: refuses every settlement (200 `success: false`, no transaction), sends nothing (a facilitator
 *   out of gas). Verification answers as usual.
 */
const FAULT_PATH = /^\/__fault\/(settlement-pending|settlement-pending-unsent|settle-refused)(?=\/)/;

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
  // batch-settlement (deposits, claims, settles, refunds on the channel contract stand-in, localnet.ts) with no
  // receiver authorizer of its own: servers sign their claims and refunds, so no refund needs authenticating here.
  const facilitator = new x402Facilitator()
    .register(network, new ExactEvmScheme(signer))
    .register(network, new BatchSettlementEvmScheme(signer));
  const log: FacilitatorLogEntry[] = [];
  const catalogue: LocalFacilitator["catalogue"] = [];

  /** The `EXTENSION-RESPONSES` of a settled payment that echoes a Bazaar extension, after cataloguing it. */
  const bazaarResponse = (payload: PaymentPayload, requirements: PaymentRequirements): Record<string, string> => {
    const extension = payload.extensions?.bazaar as Parameters<typeof validateDiscoveryExtension>[0] | undefined;
    if (!extension) return {};
    const checked = validateDiscoveryExtension(extension);
    const info = checked.valid ? extractDiscoveryInfo(payload, requirements) : null;
    if (info) catalogue.push(info);
    const bazaar = info
      ? { status: "success" }
      : { status: "rejected", rejectedReason: checked.errors?.join("; ") ?? "the discovery info could not be read" };
    return { "EXTENSION-RESPONSES": Buffer.from(JSON.stringify({ bazaar })).toString("base64") };
  };

  const server = await listen(async (req, res) => {
    const fullPath = new URL(req.url ?? "/", "http://x").pathname;
    const fault = FAULT_PATH.exec(fullPath);
    const path = fault ? fullPath.slice(fault[0].length) : fullPath;
    if (req.method === "GET" && path === "/supported") return sendJson(res, 200, facilitator.getSupported());
    if (req.method === "GET" && path === "/__facilitator/log") return sendJson(res, 200, log);
    if (req.method === "GET" && path === "/__facilitator/bazaar") return sendJson(res, 200, catalogue);
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
    const supported = facilitator
      .getSupported()
      .kinds.some((k) => k.network === paymentRequirements.network && k.scheme === paymentRequirements.scheme);
    if (!supported) {
      result = {
        success: false,
        errorReason: "unsupported_scheme",
        transaction: "",
        network: paymentRequirements.network,
      };
    } else if (fault?.[1] === "settle-refused") {
      result = {
        success: false,
        errorReason: "insufficient_funds_for_gas",
        transaction: "",
        network: paymentRequirements.network,
      };
    } else if (fault?.[1] === "settlement-pending-unsent") {
      // A broadcast the facilitator believes it made, never mined (dropped from the mempool): a hash, nothing sent.
      result = {
        success: false,
        errorReason: "settlement_pending",
        errorMessage: "the transaction's receipt did not arrive in time",
        transaction: keccak256(toHex(`unsent:${nonceOf(paymentPayload)}`)),
        network: paymentRequirements.network,
      };
    } else {
      try {
        result = await facilitator.settle(paymentPayload, paymentRequirements);
      } catch (err) {
        // Past routing, the transaction may have been sent: not a refusal, as @x402/evm answers a failed receipt wait.
        result = {
          success: false,
          errorReason: "settlement_pending",
          errorMessage: (err as Error).message,
          transaction: "",
          network: paymentRequirements.network,
        };
      }
      if (fault?.[1] === "settlement-pending" && result.success) {
        // Sent and mined, but the receipt wait "failed": `settlement_pending` with the hash, as @x402/evm answers then.
        result = {
          ...result,
          success: false,
          errorReason: "settlement_pending",
          errorMessage: "the transaction's receipt did not arrive in time",
        };
      }
    }
    entry(result.success, result.errorReason, result.payer, result.transaction || undefined);
    return sendJson(res, 200, result, result.success ? bazaarResponse(paymentPayload, paymentRequirements) : {});
  }, options.port ?? 0);

  return { ...server, address: account.address, network, log, catalogue };
}
