// The response form of a transaction: what `GET /v1/transactions/{id}` answers and what a `transaction.*` webhook
// event carries as its `data` (the API's schema, src/api/routes/history-records.ts, is checked against it).
import type { TransactionRow } from "../db/schema.ts";
import type { TransactionWithPaywall } from "../db/transactions.ts";

export interface TransactionJson {
  id: string;
  paywallId: string;
  serviceId: string | null;
  protocol: TransactionRow["protocol"];
  network: string;
  amount: string;
  currency: TransactionRow["currency"];
  status: TransactionRow["status"];
  payerAddress: string | null;
  txHash: string | null;
  failureReason: string | null;
  /** A session's settlement: the channel it moved (null: a payment per call). */
  channelId: string | null;
  createdAt: string;
  settledAt: string | null;
  Paywall: { id: string; slug: string; name: string } | null;
}

/** The response form of a transaction, with the summary of its paywall (null once the paywall is deleted). */
export const toTransactionJson = (row: TransactionWithPaywall): TransactionJson => ({
  id: row.id,
  paywallId: row.paywallId,
  serviceId: row.serviceId,
  protocol: row.protocol,
  network: row.network,
  amount: row.amount,
  currency: row.currency,
  status: row.status,
  payerAddress: row.payerAddress,
  txHash: row.txHash,
  failureReason: row.failureReason,
  channelId: row.channelId,
  createdAt: row.createdAt.toISOString(),
  settledAt: row.settledAt?.toISOString() ?? null,
  // `Paywall` in PascalCase, as the specification names the paywalls a service embeds: one spelling for an embedded paywall.
  Paywall: row.paywallSlug === null ? null : { id: row.paywallId, slug: row.paywallSlug, name: row.paywallName ?? "" },
});
