// Never lost, never blocking: a webhook event is written in the same batch as the ledger move that causes it, reaches
// the queue after the batch (or through the sweep when that send is lost), and survives a consumer that dies
// mid-batch. The endpoint's run of failures disables it; the tenant re-enables it.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { completePayment, failPayment, leavePaymentUnknown } from "../../src/core/ledger/ledger.ts";
import { queueOutbox, WEBHOOK_SWEEP_BATCH } from "../../src/core/webhooks/outbox.ts";
import { WEBHOOK_DISABLE_AFTER, WEBHOOK_OVERDUE_MS } from "../../src/core/webhooks/schedule.ts";
import { getDb } from "../../src/db/client.ts";
import { PAYMENT_SWEEP_CRON } from "../../src/gateway/sweep.ts";
import worker from "../../src/index.ts";
import { api } from "../support/client.ts";
import { useTestClock } from "../support/clock.ts";
import { consoleOutput } from "../support/console.ts";
import { faultyD1, sqlMatching } from "../support/fake-bindings.ts";
import { completeRecorded, failRecorded, recordPayment, txHash } from "../support/payments.ts";
import { createEndpoint, deliveryIds, deliveryLog, hookTenant, inboxUrl, newInbox, received, runConsumer } from "./support.ts";

/** A queue binding that records what is sent, or fails every send. */
function recordingQueue(fail = false) {
  const sent: string[] = [];
  const queue = {
    async send(body: { deliveryId: string }) {
      if (fail) throw new Error("Queue send failed");
      sent.push(body.deliveryId);
    },
    async sendBatch(messages: { body: { deliveryId: string } }[]) {
      if (fail) throw new Error("Queue send failed");
      sent.push(...messages.map((m) => m.body.deliveryId));
    },
  };
  return { queue: queue as unknown as Queue, sent };
}

const statusOf = async (transactionId: string) =>
  (await env.DB.prepare("SELECT status FROM transactions WHERE id = ?").bind(transactionId).first<{ status: string }>())?.status;

describe("the outbox", () => {
  it("is written in the move's own batch: a fault inside it leaves neither the outcome nor the event", async () => {
    const who = await hookTenant();
    const endpoint = await createEndpoint(who, inboxUrl(newInbox()));
    const ref = await recordPayment(who.paywall);
    const faulty = faultyD1(env.DB, [
      { match: sqlMatching(/insert into "webhook_deliveries"/), timing: "inside", statement: 3, fault: "storageReset" },
    ]);
    const outcome = { statusCode: 200, responseTime: 5 };
    await expect(completePayment(getDb(faulty.db), ref, txHash(), outcome)).rejects.toThrow();
    expect(faulty.injected).toHaveLength(1);
    expect(await statusOf(ref.transactionId)).toBe("PENDING");
    expect(await deliveryIds(endpoint.id)).toEqual([]);

    expect(await completeRecorded(ref)).toBe(true);
    expect(await deliveryIds(endpoint.id)).toHaveLength(1);
  });

  it("records one event per move that happened: a repeated or a losing move adds none", async () => {
    const who = await hookTenant();
    const all = await createEndpoint(who, inboxUrl(newInbox()));
    const failures = await createEndpoint(who, inboxUrl(newInbox()), ["transaction.failed"]);
    const disabled = await createEndpoint(who, inboxUrl(newInbox()));
    expect(
      (await api(`/v1/webhook-endpoints/${disabled.id}`, { key: who.key, method: "PATCH", body: { enabled: false } })).status,
    ).toBe(200);

    const ref = await recordPayment(who.paywall);
    await leavePaymentUnknown(getDb(env.DB), ref, undefined);
    await leavePaymentUnknown(getDb(env.DB), ref, txHash());
    expect(await completeRecorded(ref)).toBe(true);
    expect(await completeRecorded(ref)).toBe(false);
    expect(await failRecorded(ref)).toBe(false);

    const types = async (endpointId: string) => (await deliveryLog(who, endpointId)).map((d) => d.eventType).sort();
    expect(await types(all.id)).toEqual(["transaction.completed", "transaction.pending"]);
    expect(await types(failures.id)).toEqual([]);
    expect(await types(disabled.id)).toEqual([]);

    await failRecorded(await recordPayment(who.paywall));
    expect(await types(failures.id)).toEqual(["transaction.failed"]);
  });

  it("hands the new deliveries to the queue after the batch", async () => {
    const who = await hookTenant();
    const endpoint = await createEndpoint(who, inboxUrl(newInbox()));
    const { queue, sent } = recordingQueue();
    const waits: Promise<unknown>[] = [];
    const outbox = queueOutbox({ ...env, WEBHOOKS_QUEUE: queue } as Env, { waitUntil: (p) => waits.push(p) });
    await failPayment(
      getDb(env.DB),
      await recordPayment(who.paywall),
      "upstream answered 502",
      { statusCode: 502, responseTime: 1 },
      outbox,
    );
    await Promise.all(waits);
    expect(sent).toEqual(await deliveryIds(endpoint.id));
    expect(sent).toHaveLength(1);
  });

  it("loses nothing when the send after the batch fails: the sweep sends it once it is overdue", async () => {
    const output = consoleOutput();
    const clock = useTestClock();
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox));
    const broken = recordingQueue(true);
    const waits: Promise<unknown>[] = [];
    const outbox = queueOutbox({ ...env, WEBHOOKS_QUEUE: broken.queue } as Env, { waitUntil: (p) => waits.push(p) });
    const ref = await recordPayment(who.paywall);
    await completePayment(getDb(env.DB), ref, txHash(), { statusCode: 200, responseTime: 1 }, undefined, outbox);
    await Promise.all(waits);
    expect(output.at("warn").join("\n")).toContain('"webhooks":"enqueue-failed"');
    const [deliveryId] = await deliveryIds(endpoint.id);

    const sweep = async () => {
      const { queue, sent } = recordingQueue();
      await worker.scheduled(createScheduledController({ cron: PAYMENT_SWEEP_CRON, scheduledTime: clock.now() }), {
        ...env,
        WEBHOOKS_QUEUE: queue,
      } as Env);
      return sent;
    };
    expect(await sweep()).not.toContain(deliveryId);
    clock.advance(WEBHOOK_OVERDUE_MS + 1_000);
    // Oldest first, WEBHOOK_SWEEP_BATCH a run: deliveries other files of this runtime left pending may come first.
    let swept = await sweep();
    for (let runs = 1; !swept.includes(deliveryId!) && swept.length === WEBHOOK_SWEEP_BATCH && runs < 20; runs++) {
      swept = await sweep();
    }
    expect(swept).toContain(deliveryId);
    // Sent again: not again before it is overdue once more.
    expect(await sweep()).not.toContain(deliveryId);

    await runConsumer([deliveryId!]);
    const [got] = await received(inbox);
    expect(got!.headers["webhook-id"]).toBe(deliveryId);
    expect(() => new Webhook(endpoint.secret).verify(got!.body, got!.headers)).not.toThrow();
  });
});

describe("the consumer", () => {
  it("loses no event when it crashes mid-batch: what was not recorded is redelivered, with the same webhook-id", async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox), ["transaction.completed"]);
    for (let i = 0; i < 3; i++) await completeRecorded(await recordPayment(who.paywall));
    const ids = await deliveryIds(endpoint.id);
    expect(ids).toHaveLength(3);

    // The second attempt's record fails: the consumer dies there.
    const faulty = faultyD1(env.DB, [{ match: sqlMatching(/insert into "webhook_attempts"/), fault: "networkLost", times: 1 }]);
    const crashed = await runConsumer(ids, { env: { DB: faulty.db } });
    expect(faulty.injected).toHaveLength(1);
    expect(crashed.error).toBeDefined();
    expect(crashed.acked).toHaveLength(2);
    expect(crashed.retried).toEqual([]);
    // What the queue redelivers: every message not acknowledged.
    const unacked = ids.filter((id) => !crashed.acked.includes(id));
    expect(unacked).toHaveLength(1);

    const again = await runConsumer(unacked, { attempts: 2 });
    expect(again).toMatchObject({ error: undefined, acked: unacked });
    const log = await deliveryLog(who, endpoint.id);
    expect(log.map((d) => d.status)).toEqual(["delivered", "delivered", "delivered"]);
    // At least once: the receiver got every event, the unrecorded one twice under one id.
    const got = (await received(inbox)).map((g) => g.headers["webhook-id"]);
    expect(new Set(got)).toEqual(new Set(ids));
    expect(got.filter((id) => id === unacked[0])).toHaveLength(2);
  });

  it(`disables an endpoint after ${WEBHOOK_DISABLE_AFTER} failed attempts in a row; the tenant re-enables it`, async () => {
    const output = consoleOutput();
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox, "fail=1000"), ["transaction.completed"]);
    for (let i = 0; i < WEBHOOK_DISABLE_AFTER; i++) await completeRecorded(await recordPayment(who.paywall));
    const ids = await deliveryIds(endpoint.id);
    for (const id of ids.slice(0, -1)) await runConsumer([id]);
    let state = (await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key })).body.data;
    expect(state).toMatchObject({ enabled: true, consecutiveFailures: WEBHOOK_DISABLE_AFTER - 1 });

    await runConsumer(ids.slice(-1));
    state = (await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key })).body.data;
    expect(state).toMatchObject({ enabled: false, consecutiveFailures: WEBHOOK_DISABLE_AFTER });
    expect(state.disabledReason).toMatch(/consecutive failed attempts/);
    expect(output.at("warn").join("\n")).toContain('"webhooks":"endpoint-disabled"');
    // Disabled: new events are not recorded for it, pending ones are given up, and a retry is refused.
    await completeRecorded(await recordPayment(who.paywall));
    expect(await deliveryIds(endpoint.id)).toHaveLength(WEBHOOK_DISABLE_AFTER);
    await runConsumer([ids[0]!]);
    expect((await deliveryLog(who, endpoint.id)).find((d) => d.id === ids[0])).toMatchObject({
      status: "failed",
      error: "the endpoint is disabled",
    });
    const refused = await api(`/v1/webhook-endpoints/${endpoint.id}/deliveries/${ids[0]}/retry`, {
      key: who.key,
      method: "POST",
    });
    expect(refused.status).toBe(409);

    const enabled = await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key, method: "PATCH", body: { enabled: true } });
    expect(enabled.body.data).toMatchObject({ enabled: true, consecutiveFailures: 0, disabledReason: null });
    const retried = await api(`/v1/webhook-endpoints/${endpoint.id}/deliveries/${ids[0]}/retry`, {
      key: who.key,
      method: "POST",
    });
    expect(retried.status).toBe(202);
    expect(retried.body.data).toMatchObject({ id: ids[0], status: "pending" });
  });

  it("a message the queue gave up on (its dead-letter queue) is recorded failed for the tenant, who can retry it", async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox), ["transaction.completed"]);
    await completeRecorded(await recordPayment(who.paywall));
    const [id] = await deliveryIds(endpoint.id);
    const output = consoleOutput();
    const dead = await runConsumer([id!], { queue: "paywall-webhooks-dlq", attempts: 11 });
    expect(dead).toMatchObject({ error: undefined, acked: [id], retried: [] });
    // Nothing was sent from the dead-letter queue: it only records.
    expect(await received(inbox)).toEqual([]);
    expect(output.at("warn").join("\n")).toContain(`"webhooks":"dead-lettered","deliveryId":"${id}"`);
    const [logged] = await deliveryLog(who, endpoint.id);
    expect(logged).toMatchObject({ id, status: "failed", error: expect.stringContaining("dead-lettered") });
    const retried = await api(`/v1/webhook-endpoints/${endpoint.id}/deliveries/${id}/retry`, { key: who.key, method: "POST" });
    expect(retried.status).toBe(202);
    expect(await runConsumer([id!])).toMatchObject({ error: undefined, acked: [id] });
    expect((await received(inbox)).map((r) => r.headers["webhook-id"])).toEqual([id]);
  });
});
