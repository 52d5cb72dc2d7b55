/**
 * A `PAYMENT-SIGNATURE` as presented, read before any session or facilitator is asked: which transaction it would be,
 * its retry key, and a digest of the credential (src/gateway/pipeline/known.ts answers a payment presented again from them).
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { paymentRecordIds, paymentRetryKey } from "../../core/ledger/ids.ts";
import { type NetworkEntry, networkOfCaip2 } from "../../core/money/network-table.ts";
import type { NetworkId } from "../../core/money/networks.ts";
import { VALIDITY_WINDOW_SECONDS } from "../../core/payments.ts";
import { sha256Hex } from "../../lib/ids.ts";
import { buyerProof } from "../paid-answer.ts";
import type { PresentedPayment } from "../pipeline/method.ts";
import { challengeNonceOf, VALID_BEFORE_SKEW_SECONDS, x402Lib } from "./sdk.ts";

/** EIP-3009's `TransferWithAuthorization`, the typed data an `exact` EVM payment signs. */
const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

interface Authorization {
  from: `0x${string}`;
  to: `0x${string}`;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: `0x${string}`;
}

const isHex = (value: unknown, bytes?: number): value is `0x${string}` =>
  typeof value === "string" && (bytes ? new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`) : /^0x[0-9a-fA-F]+$/).test(value);
const isUint = (value: unknown): value is string => typeof value === "string" && /^[0-9]{1,78}$/.test(value);

/**
 * A `PAYMENT-SIGNATURE` as presented, decoded locally (`decodePayment`; no session, no facilitator): the transaction id its payment has,
 * its `payment-identifier` retry key, the signature's digest, and the buyer's proof (its `payment-identifier`, else
 * its challenge's nonce, with the `Authorization` it was sent with); `undefined` when it is not an `exact` EIP-3009
 * payment on a network of the table. Nothing is verified here: `signedBy` recovers the EIP-712 signer when asked.
 */
export async function presentedX402(
  payload: PaymentPayload | undefined,
  table: Record<NetworkId, NetworkEntry>,
  authorizationHeader: string | undefined,
): Promise<PresentedPayment | undefined> {
  if (payload?.x402Version !== 2) return undefined;
  const sdk = await x402Lib();
  const { signature, authorization: a } = (payload.payload ?? {}) as {
    signature?: unknown;
    authorization?: Partial<Authorization>;
  };
  if (!isHex(signature) || !a || !isHex(a.from, 20) || !isHex(a.to, 20) || !isHex(a.nonce, 32)) return undefined;
  if (!isUint(a.value) || !isUint(a.validAfter) || !isUint(a.validBefore)) return undefined;
  const authorization = a as Authorization;
  const accepted = payload.accepted as Partial<PaymentRequirements> | undefined;
  const network = networkOfCaip2(table, Object.keys(table), String(accepted?.network ?? ""));
  if (!network) return undefined;
  const paymentId = sdk.extractPaymentIdentifier(payload);
  const entry = table[network];
  return {
    transactionId: (await paymentRecordIds("x402", network, authorization.from, authorization.nonce)).transactionId,
    ...(paymentId ? { paymentKey: await paymentRetryKey({ protocol: "x402", payer: authorization.from, paymentId }) } : {}),
    credential: await x402CredentialDigest(signature),
    // Accepted only while `validBefore` ≤ now + the window + the skew (./sdk.ts `validBeforeCutoff`).
    ...(paymentId
      ? {}
      : { since: new Date((Number(authorization.validBefore) - VALIDITY_WINDOW_SECONDS - VALID_BEFORE_SKEW_SECONDS) * 1000) }),
    proof: await buyerProof(paymentId ?? challengeNonceOf(payload), authorizationHeader),
    async signedBy(payer) {
      const extra = (accepted?.extra ?? {}) as { name?: unknown; version?: unknown };
      if (!isHex(accepted?.asset, 20) || typeof extra.name !== "string" || typeof extra.version !== "string") return false;
      try {
        const signer = await sdk.recoverTypedDataAddress({
          domain: { name: extra.name, version: extra.version, chainId: entry.chainId, verifyingContract: accepted.asset },
          types: TRANSFER_WITH_AUTHORIZATION,
          primaryType: "TransferWithAuthorization",
          message: {
            ...authorization,
            value: BigInt(authorization.value),
            validAfter: BigInt(authorization.validAfter),
            validBefore: BigInt(authorization.validBefore),
          },
          signature,
        });
        return signer.toLowerCase() === payer.toLowerCase() && authorization.from.toLowerCase() === payer.toLowerCase();
      } catch {
        return false;
      }
    },
  };
}

/** What identifies an x402 credential: its signature (one authorization, one signature), hashed. */
export const x402CredentialDigest = (signature: string) => sha256Hex(`x402|${signature.toLowerCase()}`);
