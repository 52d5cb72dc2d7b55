// A payment's records as its object sends them to D1: its start (the PENDING transaction, its REQUEST event) and its
// completion (the COMPLETED transaction with its webhook delivery, its SUCCESS event), from the ledger's own rows.
import { completeRows, type PaymentRef, type PaymentStart, startRows } from "../../src/core/ledger/ledger.ts";
import { NETWORK_TABLE } from "../../src/core/money/network-table.ts";
import { transactionDeliveryIdPrefix } from "../../src/core/webhooks/events.ts";
import type { PaymentRecord } from "../../src/db/ledger.ts";
import { address, txHash } from "../support/payments.ts";

/** A new x402 payment of 0.0025 USDC to `paywall`: its ref, and its start as the gateway records it. */
export function newPaymentOf(paywall: { id: string; tenantId: string; serviceId: string | null }) {
  const entry = NETWORK_TABLE["base-sepolia"];
  const ref: PaymentRef = {
    transactionId: `txn_x402_${txHash().slice(2, 42)}`,
    tenantId: paywall.tenantId,
    paywallId: paywall.id,
    serviceId: paywall.serviceId,
    protocol: "x402",
    network: "base-sepolia",
    amount: "2500",
  };
  const start: PaymentStart = {
    ...ref,
    currency: entry.token,
    payer: address(),
    method: "GET",
    pending: { reference: txHash(), validBefore: new Date(Date.now() + 300_000), asset: entry.asset, payTo: address() },
  };
  return { ref, start };
}

export function startedAndCompleted(ref: PaymentRef, start: PaymentStart, txHash: string, responseTime: number) {
  const [transaction, request] = startRows(start);
  const [change, success] = completeRows(ref, txHash, { statusCode: 200, responseTime });
  const started: PaymentRecord[] = [
    { kind: "transaction", row: transaction },
    { kind: "event", row: request },
  ];
  const completed: PaymentRecord[] = [
    {
      kind: "transaction",
      row: { ...transaction, ...change },
      webhook: {
        type: "transaction.completed",
        idPrefix: transactionDeliveryIdPrefix(ref.transactionId, "transaction.completed"),
        at: new Date(),
      },
    },
    { kind: "event", row: success },
  ];
  return { started, completed };
}
