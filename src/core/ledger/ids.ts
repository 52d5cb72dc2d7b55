import { sha256Hex } from "../../lib/ids.ts";

export interface PaymentRecordIds {
  transactionId: string;
  requestEventId: string;
  outcomeEventId: string;
}

/**
 * Record ids derived from the payment itself: protocol, network, payer and what makes the payment unique — x402:
 * the EIP-3009 authorization's nonce (unique per payer and token on a chain); MPP: the challenge id (an HMAC over
 * the challenge we issued, bound by the transaction's memo, so one challenge is paid at most once, whatever
 * re-encoding of the signed transaction is sent). The same payment always maps to the same transaction id, so the
 * transaction's primary key decides that a payment is used at most once. Letter case of hex values does not matter
 * (a challenge id is base64url, where it does).
 */
export async function paymentRecordIds(
  protocol: "x402" | "mpp",
  network: string,
  payer: string,
  nonce: string,
): Promise<PaymentRecordIds> {
  const ref = (
    await sha256Hex(`${protocol}|${network}|${payer.toLowerCase()}|${/^0x[0-9a-f]+$/i.test(nonce) ? nonce.toLowerCase() : nonce}`)
  ).slice(0, 40);
  const transactionId = `txn_${protocol}_${ref}`;
  return { transactionId, requestEventId: requestEventIdOf(transactionId), outcomeEventId: outcomeEventIdOf(transactionId) };
}

const refOf = (transactionId: string) => transactionId.replace(/^txn_(x402|mpp)_/, "");

/** The REQUEST event's id of a payment, from its transaction's id. */
export const requestEventIdOf = (transactionId: string) => `evt_${refOf(transactionId)}_request`;

/** The outcome event's id of a payment (SUCCESS or ERROR: one per payment), from its transaction's id. */
export const outcomeEventIdOf = (transactionId: string) => `evt_${refOf(transactionId)}_outcome`;

/**
 * The retry key of a payment that may be presented again with a new credential (SHA-256 hex): x402's
 * `payment-identifier`, which the buyer chooses, per payer (another payer's same id is another key); MPP's challenge
 * id, which the gateway issued (one challenge, one payment).
 */
export async function paymentRetryKey(
  key: { protocol: "x402"; payer: string; paymentId: string } | { protocol: "mpp"; challengeId: string },
): Promise<string> {
  return sha256Hex(key.protocol === "x402" ? `x402|${key.payer.toLowerCase()}|${key.paymentId}` : `mpp|${key.challengeId}`);
}
