import type { TransactionWithPaywall } from "../../db/transactions.ts";
import type { Transaction } from "./schemas.ts";

/** The response form of a transaction, with the summary of its paywall (null once the paywall is deleted). */
export const toTransaction = (row: TransactionWithPaywall): Transaction => ({
  id: row.id,
  paywallId: row.paywallId,
  serviceId: row.serviceId,
  protocol: row.protocol,
  network: row.network as Transaction["network"],
  amount: row.amount,
  currency: row.currency,
  status: row.status,
  payerAddress: row.payerAddress,
  txHash: row.txHash,
  failureReason: row.failureReason,
  createdAt: row.createdAt.toISOString(),
  settledAt: row.settledAt?.toISOString() ?? null,
  Paywall: row.paywallSlug === null ? null : { id: row.paywallId, slug: row.paywallSlug, name: row.paywallName ?? "" },
});
