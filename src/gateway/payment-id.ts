import { sha256Hex } from "../lib/ids.ts";

export interface PaymentRecordIds {
  transactionId: string;
  requestEventId: string;
  outcomeEventId: string;
}

/**
 * Record ids derived from the payment itself: protocol, network, payer and the authorization's nonce (unique per
 * payer and token on a chain). The same payment always maps to the same transaction id, so the transaction's
 * primary key decides that a payment is used at most once. Letter case of the hex values does not matter.
 */
export async function paymentRecordIds(
  protocol: "x402" | "mpp",
  network: string,
  payer: string,
  nonce: string,
): Promise<PaymentRecordIds> {
  const ref = (await sha256Hex(`${protocol}|${network}|${payer.toLowerCase()}|${nonce.toLowerCase()}`)).slice(0, 40);
  return { transactionId: `txn_${protocol}_${ref}`, requestEventId: `evt_${ref}_request`, outcomeEventId: `evt_${ref}_outcome` };
}
