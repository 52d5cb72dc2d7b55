// Payments as the gateway records them, for tests that need history: moved through the ledger's own functions
// (src/core/ledger/ledger.ts), never written around it.
import { paymentRecordIds } from "../../src/core/ledger/ids.ts";
import { completePayment, failPayment, type PaymentRef, startPayment } from "../../src/core/ledger/ledger.ts";
import { NETWORK_TABLE } from "../../src/core/money/network-table.ts";
import type { NetworkId } from "../../src/core/money/networks.ts";
import type { PaywallRow } from "../../src/db/schema.ts";
import { randomHex } from "../../src/lib/ids.ts";
import { db } from "./factories.ts";

export const txHash = () => `0x${randomHex(32)}`;
export const address = () => `0x${randomHex(20)}`;

export interface PaymentOptions {
  /** Where it ends: PENDING (started only), COMPLETED or FAILED. Default PENDING. */
  status?: "PENDING" | "COMPLETED" | "FAILED";
  amount?: string;
  network?: NetworkId;
  protocol?: "x402" | "mpp";
  payer?: string;
  /** When it started (and, if it ends, when it ended). */
  at?: Date;
  txHash?: string;
  failureReason?: string;
}

/** A payment of `paywall`, started through the ledger and, unless PENDING, completed or failed. Returns its ref. */
export async function recordPayment(paywall: PaywallRow, options: PaymentOptions = {}): Promise<PaymentRef> {
  const network = options.network ?? (paywall.networks[0] as NetworkId);
  const protocol = options.protocol ?? (NETWORK_TABLE[network].kind === "tempo" ? "mpp" : "x402");
  const payer = options.payer ?? address();
  const { transactionId } = await paymentRecordIds(protocol, network, payer, txHash());
  const ref: PaymentRef = {
    transactionId,
    tenantId: paywall.tenantId,
    paywallId: paywall.id,
    serviceId: paywall.serviceId,
    protocol,
    network,
    amount: options.amount ?? paywall.price,
  };
  const entry = NETWORK_TABLE[network];
  const at = options.at ?? new Date();
  await startPayment(db(), {
    ...ref,
    currency: entry.token,
    payer,
    method: "GET",
    at,
    pending: {
      reference: txHash(),
      validBefore: new Date(at.getTime() + 300_000),
      asset: entry.asset,
      payTo: paywall.merchantWallet,
    },
  });
  if (options.status === "COMPLETED") await completeRecorded(ref, options.txHash ?? txHash(), at);
  if (options.status === "FAILED") await failRecorded(ref, options.failureReason ?? "upstream answered 502", at);
  return ref;
}

/** The ledger's `complete` move of a recorded payment; `false` if it was no longer PENDING. */
export const completeRecorded = (ref: PaymentRef, hash = txHash(), at?: Date) =>
  completePayment(db(), ref, hash, { statusCode: 200, responseTime: 42, ...(at ? { at } : {}) });

/** The ledger's `fail` move of a recorded payment; `false` if it was no longer PENDING. */
export const failRecorded = (ref: PaymentRef, reason = "upstream answered 502", at?: Date) =>
  failPayment(db(), ref, reason, { statusCode: 502, responseTime: 42, ...(at ? { at } : {}) });
