// Payment records reaching D1 in batches (src/core/ledger/records-queue.ts, `applyPaymentRecords`): many payments'
// records in a few statements, through the real payment-records queue and its consumer, read back from the real D1.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { outcomeEventIdOf, requestEventIdOf } from "../../src/core/ledger/ids.ts";
import type { PaymentRef } from "../../src/core/ledger/ledger.ts";
import { READ_MODEL_MOVES, type RecordsMessage, storeRecord } from "../../src/core/ledger/payment-object.ts";
import { getDb } from "../../src/db/client.ts";
import { applyPaymentRecords, type PaymentRecord } from "../../src/db/ledger.ts";
import { countingD1, newAccount } from "../../src/lib/instrumentation.ts";
import { createPaywallFor } from "../history/support.ts";
import { createApiKey } from "../support/factories.ts";
import { txHash } from "../support/payments.ts";
import { createEndpoint, inboxUrl, newInbox } from "../webhooks/support.ts";
import { newPaymentOf, startedAndCompleted } from "./records-support.ts";

/** A tenant with a paywall and a webhook endpoint, and `n` payments' records: each started, then completed. */
async function payments(n: number) {
  const { key, tenant } = await createApiKey();
  const paywall = await createPaywallFor(tenant);
  await createEndpoint({ key }, inboxUrl(newInbox()));
  return Array.from({ length: n }, () => {
    const { ref, start } = newPaymentOf(paywall);
    const { started, completed } = startedAndCompleted(ref, start, txHash(), 3);
    return { ref, tenantId: tenant.id, started, completed };
  });
}

/** What D1 holds of these payments: transactions by status, events, deliveries, the tenant's roll-ups. */
async function stored(ids: string[], tenantId: string) {
  const list = JSON.stringify(ids);
  const one = async (query: string, ...binds: unknown[]) =>
    (
      await env.DB.prepare(query)
        .bind(...binds)
        .first<{ n: number }>()
    )?.n ?? 0;
  return {
    completed: await one(
      "SELECT count(*) AS n FROM transactions WHERE status = 'COMPLETED' AND id IN (SELECT value FROM json_each(?))",
      list,
    ),
    pending: await one(
      "SELECT count(*) AS n FROM transactions WHERE status = 'PENDING' AND id IN (SELECT value FROM json_each(?))",
      list,
    ),
    events: await one(
      "SELECT count(*) AS n FROM events WHERE id IN (SELECT value FROM json_each(?))",
      JSON.stringify(ids.flatMap((id) => [requestEventIdOf(id), outcomeEventIdOf(id)])),
    ),
    deliveries: await one(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE transaction_id IN (SELECT value FROM json_each(?))",
      list,
    ),
    // The roll-ups the dashboard reads, kept by D1's triggers from these rows.
    revenue: await one(
      "SELECT coalesce(sum(amount), 0) AS n FROM daily_revenue WHERE tenant_id = ? AND scope = 'tenant'",
      tenantId,
    ),
    requests: await one(
      "SELECT coalesce(sum(requests), 0) AS n FROM daily_stats WHERE tenant_id = ? AND scope = 'tenant'",
      tenantId,
    ),
  };
}

/** Sends each message through the real payment-records queue, and waits until D1 shows `done` (at most 10 s). */
async function throughTheQueue(messages: RecordsMessage[], done: () => Promise<boolean>) {
  for (const m of messages) await env.PAYMENT_RECORDS_QUEUE.send(m);
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

const messageOf = (ref: PaymentRef, records: PaymentRecord[]): RecordsMessage => ({
  transactionId: ref.transactionId,
  seqs: [],
  records: records.map(storeRecord),
});

describe("payment records reach D1 in batches", { timeout: 30_000 }, () => {
  it("500 payments' records (2,000 rows and their deliveries) in 3 statements, applied twice recording once", async () => {
    const all = await payments(500);
    const records = all.flatMap((p) => [...p.started, ...p.completed]);
    const ids = all.map((p) => p.ref.transactionId);
    const acc = newAccount();
    const counted = getDb(countingD1(env.DB, acc));

    const deliveries = await applyPaymentRecords(counted, records, READ_MODEL_MOVES);
    expect(acc.statements).toBe(3);
    expect(deliveries).toHaveLength(500);
    const once = await stored(ids, all[0]!.tenantId);
    expect(once).toEqual({ completed: 500, pending: 0, events: 1000, deliveries: 500, revenue: 500 * 2500, requests: 500 });

    // Applied again (a batch the queue delivers twice): nothing is recorded twice, no delivery written again.
    expect(await applyPaymentRecords(counted, records, READ_MODEL_MOVES)).toEqual([]);
    expect(acc.statements).toBe(6);
    expect(await stored(ids, all[0]!.tenantId)).toEqual(once);
  });

  it("through the queue: a payment's message delivered twice is recorded once", async () => {
    const [p] = await payments(1);
    const message = messageOf(p!.ref, [...p!.started, ...p!.completed]);
    const ids = [p!.ref.transactionId];
    const landed = await throughTheQueue([message], async () => (await stored(ids, p!.tenantId)).completed === 1);
    expect(landed).toBe(true);
    const once = await stored(ids, p!.tenantId);
    expect(once).toEqual({ completed: 1, pending: 0, events: 2, deliveries: 1, revenue: 2500, requests: 1 });
    // The same message again, e.g. sent again by an object whose report of the first was lost: once the queue has
    // delivered it (a marker message behind it has landed), nothing more is recorded.
    const [marker] = await payments(1);
    await throughTheQueue([message, messageOf(marker!.ref, marker!.started)], async () => {
      return (await stored([marker!.ref.transactionId], marker!.tenantId)).pending === 1;
    });
    expect(await stored(ids, p!.tenantId)).toEqual(once);
  });

  it("through the queue: an older record arriving after a newer one never moves the payment back", async () => {
    const [p] = await payments(1);
    const ids = [p!.ref.transactionId];
    const completed = messageOf(p!.ref, p!.completed);
    expect(await throughTheQueue([completed], async () => (await stored(ids, p!.tenantId)).completed === 1)).toBe(true);
    const started = messageOf(p!.ref, p!.started);
    // The start's records land (its REQUEST event is written) and leave the transaction COMPLETED, counted once.
    expect(await throughTheQueue([started], async () => (await stored(ids, p!.tenantId)).events === 2)).toBe(true);
    expect(await stored(ids, p!.tenantId)).toEqual({
      completed: 1,
      pending: 0,
      events: 2,
      deliveries: 1,
      revenue: 2500,
      requests: 1,
    });
  });
});
