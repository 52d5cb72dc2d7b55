// Webhook deliveries end to end inside workerd: a ledger move records the event, the queue consumer signs and POSTs
// it to a receiver stand-in (test/support/webhook-receiver.ts), and the receiver's copy is verified with the
// `standardwebhooks` library, never with our own code.
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { WEBHOOK_RETRY_DELAYS_S } from "../../src/core/webhooks/schedule.ts";
import { api } from "../support/client.ts";
import { completeRecorded, recordPayment } from "../support/payments.ts";
import { createEndpoint, deliveryIds, deliveryLog, hookTenant, inboxUrl, newInbox, received, runConsumer } from "./support.ts";

describe("webhook deliveries", () => {
  it("an endpoint receives transaction.completed for a purchase, signed as Standard Webhooks verifies it", async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox), ["transaction.completed"]);
    const ref = await recordPayment(who.paywall);
    expect(await deliveryIds(endpoint.id)).toEqual([]);
    await completeRecorded(ref);

    const [deliveryId] = await deliveryIds(endpoint.id);
    expect(deliveryId).toBeDefined();
    const run = await runConsumer([deliveryId!]);
    expect(run.error).toBeUndefined();
    expect(run.acked).toEqual([deliveryId]);

    const [got, ...more] = await received(inbox);
    expect(more).toEqual([]);
    expect(got!.headers["webhook-id"]).toBe(deliveryId);
    expect(got!.headers["content-type"]).toBe("application/json");
    const event = new Webhook(endpoint.secret).verify(got!.body, got!.headers) as Record<string, unknown>;
    const transaction = await api(`/v1/transactions/${ref.transactionId}`, { key: who.key });
    expect(event).toEqual({ type: "transaction.completed", timestamp: expect.any(String), data: transaction.body.data });
    expect((event.data as { status: string }).status).toBe("COMPLETED");

    const [logged] = await deliveryLog(who, endpoint.id);
    expect(logged).toMatchObject({
      id: deliveryId,
      eventType: "transaction.completed",
      transactionId: ref.transactionId,
      status: "delivered",
      attempts: 1,
      responseStatus: 200,
      responseBody: "ok",
      nextAttemptAt: null,
      error: null,
    });
    expect(logged!.latencyMs).toEqual(expect.any(Number));
  });

  it("a wrong signature is detectable: another secret, a changed body or a replayed id fail verification", async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox));
    const other = await createEndpoint(who, inboxUrl(newInbox()));
    await completeRecorded(await recordPayment(who.paywall));
    const [deliveryId] = await deliveryIds(endpoint.id);
    await runConsumer([deliveryId!]);
    const [got] = await received(inbox);

    expect(() => new Webhook(endpoint.secret).verify(got!.body, got!.headers)).not.toThrow();
    expect(() => new Webhook(other.secret).verify(got!.body, got!.headers)).toThrow();
    expect(() => new Webhook(endpoint.secret).verify(got!.body.replace("COMPLETED", "FAILED"), got!.headers)).toThrow();
    expect(() => new Webhook(endpoint.secret).verify(got!.body, { ...got!.headers, "webhook-id": `${deliveryId}x` })).toThrow();
  });

  it("a receiver that fails three times then recovers gets the same webhook-id each time, and the log shows each attempt", async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox, "fail=3"), ["transaction.completed"]);
    await completeRecorded(await recordPayment(who.paywall));
    const [deliveryId] = await deliveryIds(endpoint.id);

    for (const [i, delay] of WEBHOOK_RETRY_DELAYS_S.slice(0, 3).entries()) {
      const run = await runConsumer([deliveryId!], { attempts: i + 1 });
      expect(run.error).toBeUndefined();
      // (The test harness does not report a retry's delay: the log's next attempt shows it.)
      expect(run.retried.map((r) => r.msgId)).toEqual([deliveryId]);
      const [logged] = await deliveryLog(who, endpoint.id);
      expect(logged).toMatchObject({ status: "pending", attempts: i + 1, responseStatus: 500, error: "answered 500" });
      expect(Date.parse(logged!.nextAttemptAt as string) - Date.parse(logged!.lastAttemptAt as string)).toBe(delay * 1000);
    }
    const last = await runConsumer([deliveryId!], { attempts: 4 });
    expect(last.acked).toEqual([deliveryId]);

    const got = await received(inbox);
    expect(got).toHaveLength(4);
    expect(new Set(got.map((g) => g.headers["webhook-id"]))).toEqual(new Set([deliveryId]));
    // Every attempt sends the same body, each signed for its own timestamp.
    expect(new Set(got.map((g) => g.body)).size).toBe(1);
    for (const g of got) expect(() => new Webhook(endpoint.secret).verify(g.body, g.headers)).not.toThrow();

    const [logged] = await deliveryLog(who, endpoint.id);
    expect(logged).toMatchObject({ status: "delivered", attempts: 4, responseStatus: 200, nextAttemptAt: null, error: null });
    expect(logged!.attemptLog.map((a) => [a.attempt, a.ok, a.responseStatus])).toEqual([
      [1, false, 500],
      [2, false, 500],
      [3, false, 500],
      [4, true, 200],
    ]);
    // The first bytes of the answer, bounded: the receiver's failure text is longer than 256 bytes.
    const firstBody = logged!.attemptLog[0]!.responseBody as string;
    expect(firstBody.startsWith("receiver failure 1\nxxx")).toBe(true);
    expect(new TextEncoder().encode(firstBody).length).toBe(256);
  });

  it("a redirect is not followed: the attempt fails with the 302 and nothing reaches its target", async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox, "redirect=1"), ["transaction.completed"]);
    await completeRecorded(await recordPayment(who.paywall));
    const [deliveryId] = await deliveryIds(endpoint.id);
    const run = await runConsumer([deliveryId!]);
    expect(run.retried.map((r) => r.msgId)).toEqual([deliveryId]);
    expect(await received(inbox)).toHaveLength(1);
    expect(await received(`${inbox}-redirected`)).toEqual([]);
    const [logged] = await deliveryLog(who, endpoint.id);
    expect(logged).toMatchObject({ status: "pending", responseStatus: 302 });
    expect(logged!.error).toMatch(/redirect, not followed/);
  });

  it("an endpoint whose URL became private is not called at delivery", async () => {
    const who = await hookTenant();
    const endpoint = await createEndpoint(who, inboxUrl(newInbox()), ["transaction.completed"]);
    // Written around the API (as by an older rule, or a stored row): the consumer checks the URL again.
    await env.DB.prepare("UPDATE webhook_endpoints SET url = ? WHERE id = ?")
      .bind("http://169.254.169.254/latest", endpoint.id)
      .run();
    await completeRecorded(await recordPayment(who.paywall));
    const [deliveryId] = await deliveryIds(endpoint.id);
    await runConsumer([deliveryId!]);
    const [logged] = await deliveryLog(who, endpoint.id);
    expect(logged).toMatchObject({ status: "pending", attempts: 1, responseStatus: null, latencyMs: null });
    expect(logged!.error).toMatch(/^not sent: The host 169\.254\.169\.254 is in a private or reserved IP range/);
  });
});
