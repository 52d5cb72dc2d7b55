// Session channels reaching the read model (src/db/ledger.ts `applyPaymentRecords`, src/core/ledger/records-queue.ts):
// a channel's row is its object's latest state whatever order or how often its records arrive, and the consumer tells
// the channel's own object that its records landed.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type RecordsMessage, storeRecord } from "../../src/core/ledger/payment-object.ts";
import type { ChannelObject } from "../../src/core/sessions/channel-object.ts";
import { createPaywallFor } from "../history/support.ts";
import { createApiKey } from "../support/factories.ts";
import { applyRecords, channelOf, channelRecord, storedChannel } from "./channels-support.ts";

async function paywall() {
  const { tenant } = await createApiKey();
  return createPaywallFor(tenant);
}

/** Polls `done` until true (at most 10 s). */
async function eventually(done: () => Promise<boolean>) {
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe("channel records in the read model", () => {
  it("a batch applied twice leaves one row per channel, at its latest state", async () => {
    const opened = channelOf(await paywall());
    const charged = { ...opened, charged: "30000", seq: 4, lastCallAt: new Date(opened.openedAt!.getTime() + 5_000) };
    const batch = [channelRecord(opened), channelRecord(charged)];
    await applyRecords(batch);
    await applyRecords(batch);
    const { results } = await env.DB.prepare("SELECT id, charged, seq FROM channels WHERE id = ?").bind(opened.id).all();
    expect(results).toEqual([{ id: opened.id, charged: "30000", seq: 4 }]);
  });

  it("an older state arriving after a newer one never overwrites it, in one batch or across two", async () => {
    const opened = channelOf(await paywall());
    const later = { ...opened, charged: "50000", claimed: "50000", settled: "50000", status: "CLOSED" as const, seq: 9 };
    const earlier = { ...opened, charged: "20000", seq: 3 };
    await applyRecords([channelRecord(later), channelRecord(earlier)]);
    await applyRecords([channelRecord(earlier)]);
    expect(await storedChannel(opened.id)).toMatchObject({ charged: "50000", settled: "50000", status: "CLOSED", seq: 9 });
    // Who opened it, where and when stay as first recorded; only a later state moves it on.
    await applyRecords([channelRecord({ ...later, charged: "60000", seq: 10, payerAddress: "0xchanged" })]);
    expect(await storedChannel(opened.id)).toMatchObject({
      charged: "60000",
      seq: 10,
      payer_address: opened.payerAddress,
      opened_at: opened.openedAt!.getTime(),
    });
  });

  it("a record of a tenant deleted meanwhile is dropped, and the rest of its batch lands", async () => {
    const gone = channelOf(await paywall());
    const kept = channelOf(await paywall());
    await env.DB.prepare("DELETE FROM tenants WHERE id = ?").bind(gone.tenantId).run();
    await applyRecords([channelRecord(gone), channelRecord(kept)]);
    expect(await storedChannel(gone.id)).toBeNull();
    expect(await storedChannel(kept.id)).toMatchObject({ tenant_id: kept.tenantId, seq: 1 });
  });

  it("a settlement's transaction keeps the channel it moved", async () => {
    const p = await paywall();
    const channel = channelOf(p, { charged: "40000", claimed: "40000", settled: "40000", seq: 7 });
    await applyRecords([
      channelRecord(channel),
      {
        kind: "transaction",
        row: {
          id: `txn_settle_${channel.id.slice(2, 34)}`,
          tenantId: p.tenantId,
          paywallId: p.id,
          serviceId: p.serviceId,
          protocol: "x402",
          network: "base-sepolia",
          amount: "40000",
          currency: "USDC",
          status: "COMPLETED",
          payerAddress: channel.payerAddress,
          txHash: `0x${"ab".repeat(32)}`,
          channelId: channel.id,
          createdAt: new Date(),
          settledAt: new Date(),
        },
      },
    ]);
    const row = await env.DB.prepare("SELECT channel_id, amount FROM transactions WHERE channel_id = ?").bind(channel.id).first();
    expect(row).toEqual({ channel_id: channel.id, amount: "40000" });
  });
});

describe("the records consumer and the channel object", () => {
  it("through the queue: the channel's row lands and its own object is told, dropping its unsent record", async () => {
    const row = channelOf(await paywall(), { charged: "10000", seq: 2 });
    const name = `channel:${row.network}:${row.id}`;
    const object = env.CHANNELS.getByName(name);
    const unsent = (o: DurableObjectStub<ChannelObject>) =>
      runInDurableObject(o, (_, { storage }) => storage.kv.get<string>("unsent:2") ?? null);
    // The object's record, kept until the consumer reports it landed (as the object keeps what it sends).
    await runInDurableObject(object, (_, { storage }) => storage.kv.put("unsent:2", storeRecord(channelRecord(row))));
    const message: RecordsMessage = {
      transactionId: row.id,
      channel: name,
      seqs: [2],
      records: [storeRecord(channelRecord(row))],
    };
    await env.PAYMENT_RECORDS_QUEUE.send(message);
    expect(await eventually(async () => (await storedChannel(row.id))?.seq === 2)).toBe(true);
    expect(await eventually(async () => (await unsent(object)) === null)).toBe(true);
    // Its dates came through the message as dates.
    expect(await storedChannel(row.id)).toMatchObject({ opened_at: row.openedAt!.getTime(), charged: "10000" });
  });
});
