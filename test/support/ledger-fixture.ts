// TEST-ONLY. The one place outside the payment ledger (src/core/ledger/ledger.ts, src/db/ledger.ts) that writes a
// payment's status. The gateway, the sweep, the demo data and every other test move payments through the ledger's
// moves (test/support/payments.ts), which refuse a move from the wrong status. Tests use this file only for what the
// ledger rightly cannot do:
// - history seeded in bulk: thousands of rows already in a final status, as payments recorded long ago (or before a
//   migration) left them, where one ledger batch per payment would take minutes;
// - a state only a fault leaves: a row put back where an invocation cut off mid-way would have left it (a move the
//   table refuses, such as FAILED → PENDING).
// Never import it from src/ (test/ledger/ledger.test.ts checks that nothing else writes a transaction's status).

import { transactions } from "../../src/db/schema.ts";
import type { NewTransaction } from "../../src/db/transactions.ts";
import { db } from "./factories.ts";

/** Historic transaction rows, in any status, written as they are (a row whose id is stored is left as it is). */
export async function insertHistoricTransactions(rows: NewTransaction[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 100) {
    const [first, ...rest] = rows
      .slice(i, i + 100)
      .map((row) => db().insert(transactions).values(row).onConflictDoNothing({ target: transactions.id }));
    if (first) await db().batch([first, ...rest]);
  }
}

/**
 * `count` COMPLETED x402 transactions of one paywall on base-sepolia in one statement (ids `txn_big…`, amounts 10000
 * up, a hash and a payer per row, created a second apart in 5,000-second cycles from `from`).
 */
export async function insertCompletedInBulk(
  d1: D1Database,
  p: { count: number; tenantId: string; paywallId: string; serviceId: string | null; from: number },
): Promise<void> {
  await d1
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO transactions (id, tenant_id, paywall_id, service_id, protocol, network, amount, currency, status,
         payer_address, tx_hash, failure_reason, created_at, settled_at)
       SELECT printf('txn_big%017d', i), ?, ?, ?, 'x402', 'base-sepolia', CAST(10000 + i AS TEXT), 'USDC', 'COMPLETED',
         '0x' || printf('%040x', i), '0x' || printf('%064x', i), NULL, ? + (i % 5000) * 1000, NULL FROM n`,
    )
    .bind(p.count - 1, p.tenantId, p.paywallId, p.serviceId, p.from)
    .run();
}

/**
 * The statement that puts transaction `id` at `status` whatever it stood at, with its `failure_reason` and
 * `settled_at` (for a batch of the test's own): recreates what a fault leaves, or a write made before a migration.
 */
export function forceStatusStatement(
  d1: D1Database,
  id: string,
  change: { status: NewTransaction["status"]; failureReason?: string | null; settledAt?: number | null },
): D1PreparedStatement {
  return d1
    .prepare("UPDATE transactions SET status = ?, failure_reason = ?, settled_at = ? WHERE id = ?")
    .bind(change.status, change.failureReason ?? null, change.settledAt ?? null, id);
}
