// An x402 payment the sweep may settle itself (docs/gateway.md, "The payment sweep"): its request verified it, its
// upstream answered and the answer was kept, then the request died before it recorded an outcome. What the settlement
// needs (the facilitator that verified it, the signed payment and the requirements it matched) is kept sealed with
// the payment's PENDING record (`pending_payments.settlement`), bound to its tenant and its authorization's nonce.
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { keyRing } from "../../core/config.ts";
import { decryptSecret, encryptSecret, secretAad } from "../../core/secrets/secret-box.ts";

interface SweepSettlement {
  facilitatorUrl: string;
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

const aadOf = (tenantId: string, reference: string) => secretAad(tenantId, "pending_payments", reference, "settlement");

/** What the sweep needs to settle this payment, sealed for its tenant and its nonce (`reference`). */
export const sealSweepSettlement = (env: Env, tenantId: string, reference: string, settlement: SweepSettlement) =>
  encryptSecret(keyRing(env), JSON.stringify(settlement), aadOf(tenantId, reference));

/** How long the sweep gives the facilitator to settle (as the request does). */
const SWEEP_SETTLE_TIMEOUT_MS = 30_000;

/**
 * Sends the sealed settlement to its facilitator, once. Whatever the facilitator answers, the caller reads the outcome
 * from the chain (an EIP-3009 authorization moves money at most once, so a settlement sent twice cannot charge twice).
 */
export async function sendSweepSettlement(env: Env, tenantId: string, reference: string, sealed: string): Promise<void> {
  const s = JSON.parse(await decryptSecret(keyRing(env), sealed, aadOf(tenantId, reference))) as SweepSettlement;
  // The SDK's lazy part directly, not through ./sdk.ts (whose facilitator health needs the Workers runtime): this
  // module, and the sweep's, stay importable by Node scripts and tests for their constants.
  const { HTTPFacilitatorClient } = await import("./lib.ts");
  const facilitator = new HTTPFacilitatorClient({ url: s.facilitatorUrl, timeoutMs: SWEEP_SETTLE_TIMEOUT_MS });
  await facilitator.settle(s.paymentPayload, s.paymentRequirements).catch(() => undefined);
}
