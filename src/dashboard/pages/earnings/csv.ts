/** The filtered transactions as CSV: the columns, one field's quoting, and the stream read a chunk at a time. */
import { formatUsdc } from "../../../core/money/usdc.ts";
import type { Db } from "../../../db/client.ts";
import { findTransactionsAfter, type TransactionFilter, type TransactionWithPaywall } from "../../../db/transactions.ts";

/** One CSV field: quoted when needed, and a leading = + - @ neutralised so a spreadsheet never runs it as a formula. */
export function csvField(value: string | null | undefined): string {
  if (value === null || value === undefined) return "";
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const CSV_COLUMNS = [
  "id",
  "created_at",
  "paywall_id",
  "paywall_name",
  "service_id",
  "protocol",
  "network",
  "token",
  "amount",
  "amount_micro",
  "status",
  "failure_reason",
  "payer",
  "tx_hash",
  "settled_at",
];

const csvRow = (t: TransactionWithPaywall) =>
  [
    t.id,
    t.createdAt.toISOString(),
    t.paywallId,
    t.paywallName,
    t.serviceId,
    t.protocol,
    t.network,
    t.currency,
    formatUsdc(t.amount).replaceAll(",", ""),
    t.amount,
    t.status,
    t.failureReason,
    t.payerAddress,
    t.txHash,
    t.settledAt?.toISOString() ?? null,
  ]
    .map(csvField)
    .join(",");

/** Rows read per query while streaming an export: memory stays bounded whatever the number of rows. */
export const CSV_CHUNK = 500;

/**
 * The transactions of `filter` as CSV, streamed a chunk at a time (keyset paging, newest first): 100,000 rows never
 * sit in memory together.
 */
export function transactionsCsvStream(db: Db, tenantId: string, filter: TransactionFilter): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let after: { createdAt: Date; id: string } | undefined;
  let started = false;
  let done = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(`${CSV_COLUMNS.join(",")}\r\n`));
        return;
      }
      if (done) {
        controller.close();
        return;
      }
      const rows = await findTransactionsAfter(db, tenantId, filter, after, CSV_CHUNK);
      if (rows.length < CSV_CHUNK) done = true;
      const last = rows[rows.length - 1];
      if (last) after = { createdAt: last.createdAt, id: last.id };
      if (rows.length > 0) controller.enqueue(encoder.encode(`${rows.map(csvRow).join("\r\n")}\r\n`));
      if (done) controller.close();
    },
  });
}
