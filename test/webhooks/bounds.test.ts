// Webhook deliveries stay bounded: one tenant's endpoint that hangs does not hold up another tenant's delivery in the
// same batch; a delivery's schedule ends (failed for good, still replayable by hand); an endpoint that keeps failing is
// disabled and receives nothing more until it is re-enabled.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WEBHOOK_DISABLE_AFTER, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_TIMEOUT_MS } from "../../src/core/webhooks/schedule.ts";
import { page, signIn, submit, text } from "../dashboard/insights-support.ts";
import { api } from "../support/client.ts";
import { completeRecorded, recordPayment } from "../support/payments.ts";
import {
  createEndpoint,
  deliveryIds,
  deliveryLog,
  type HookTenant,
  hookTenant,
  inboxUrl,
  newInbox,
  received,
  runConsumer,
} from "./support.ts";

const statusOf = async (deliveryId: string) =>
  (await env.DB.prepare("SELECT status FROM webhook_deliveries WHERE id = ?").bind(deliveryId).first<{ status: string }>())
    ?.status;

/** One completed purchase of `who`'s paywall: its delivery to `endpointId`. */
async function newDelivery(who: HookTenant, endpointId: string) {
  const before = new Set(await deliveryIds(endpointId));
  await completeRecorded(await recordPayment(who.paywall));
  const [id] = (await deliveryIds(endpointId)).filter((d) => !before.has(d));
  expect(id).toBeDefined();
  return id!;
}

describe("webhook bounds", () => {
  it("a tenant whose endpoint hangs does not delay another tenant's delivery in the same batch", {
    timeout: 30_000,
  }, async () => {
    const slow = await hookTenant();
    const prompt = await hookTenant();
    const slowInbox = newInbox("hang");
    const promptInbox = newInbox("prompt");
    // The receiver holds the slow endpoint's answer well past the timeout.
    const held = await createEndpoint(slow, inboxUrl(slowInbox, `slow=12000`), ["transaction.completed"]);
    const quick = await createEndpoint(prompt, inboxUrl(promptInbox), ["transaction.completed"]);
    const heldDelivery = await newDelivery(slow, held.id);
    const quickDelivery = await newDelivery(prompt, quick.id);

    const started = Date.now();
    const run = runConsumer([heldDelivery, quickDelivery]);
    while ((await statusOf(quickDelivery)) !== "delivered" && Date.now() - started < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const promptMs = Date.now() - started;
    const { acked, retried } = await run;
    const batchMs = Date.now() - started;

    // The other tenant's event arrived and was recorded within 1.5 s, while the hanging one took the whole timeout.
    expect(promptMs).toBeLessThan(1_500);
    expect(await received(promptInbox)).toHaveLength(1);
    expect(acked).toEqual([quickDelivery]);
    // The hanging endpoint's attempt ends at the timeout (5 s), as a failure retried later: the batch, and the next one
    // behind it in the queue, waits no longer for it.
    expect(batchMs).toBeGreaterThanOrEqual(WEBHOOK_TIMEOUT_MS);
    expect(batchMs).toBeLessThan(6_500);
    expect(retried.map((r) => r.msgId)).toEqual([heldDelivery]);
    const [logged] = await deliveryLog(slow, held.id);
    expect(logged).toMatchObject({ status: "pending", attempts: 1, error: `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` });
  });

  it("a delivery's schedule ends; an endpoint failing every attempt is disabled and receives nothing more", {
    timeout: 30_000,
  }, async () => {
    const who = await hookTenant();
    const inbox = newInbox("down");
    const endpoint = await createEndpoint(who, inboxUrl(inbox, "fail=1000"), ["transaction.completed"]);
    const first = await newDelivery(who, endpoint.id);
    const second = await newDelivery(who, endpoint.id);
    const third = await newDelivery(who, endpoint.id);

    // The first delivery: every attempt of its schedule fails; the last is not retried, and it is failed for good.
    for (let attempt = 1; attempt <= WEBHOOK_MAX_ATTEMPTS; attempt++) {
      const run = await runConsumer([first], { attempts: attempt });
      if (attempt < WEBHOOK_MAX_ATTEMPTS)
        expect(
          run.retried.map((r) => r.msgId),
          `attempt ${attempt}`,
        ).toEqual([first]);
      else expect(run).toMatchObject({ acked: [first], retried: [] });
    }
    expect((await deliveryLog(who, endpoint.id)).find((d) => d.id === first)).toMatchObject({
      status: "failed",
      attempts: WEBHOOK_MAX_ATTEMPTS,
      nextAttemptAt: null,
    });

    // The second delivery's attempts bring the run of failures to the limit: the endpoint is disabled.
    for (let attempt = 1; WEBHOOK_MAX_ATTEMPTS + attempt <= WEBHOOK_DISABLE_AFTER; attempt++) {
      await runConsumer([second], { attempts: attempt });
    }
    expect(await received(inbox)).toHaveLength(WEBHOOK_DISABLE_AFTER);
    const shown = await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key });
    expect(shown.body.data).toMatchObject({
      enabled: false,
      consecutiveFailures: WEBHOOK_DISABLE_AFTER,
      disabledReason: `${WEBHOOK_DISABLE_AFTER} consecutive failed attempts`,
    });
    expect(await statusOf(second)).toBe("failed");

    // Nothing more reaches it: the queued delivery is given up, and new events record none.
    const late = await runConsumer([third, second], { attempts: 2 });
    expect(late.retried).toEqual([]);
    expect(await statusOf(third)).toBe("failed");
    await completeRecorded(await recordPayment(who.paywall));
    expect(await deliveryIds(endpoint.id)).toHaveLength(3);
    expect(await received(inbox)).toHaveLength(WEBHOOK_DISABLE_AFTER);

    // The dashboard says so on the Webhooks page and the endpoint's own; its Enable re-enables it and resets the run.
    const cookie = await signIn(who.tenant);
    const notice = `${endpoint.url} was disabled after ${WEBHOOK_DISABLE_AFTER} consecutive failed attempts: no events are sent to it.`;
    expect(text((await page(cookie, "/dashboard/webhooks")).html)).toContain(notice);
    expect(text((await page(cookie, `/dashboard/webhooks/${endpoint.id}`)).html)).toContain(notice);
    expect((await submit(cookie, `/dashboard/webhooks/${endpoint.id}/enable`, {})).status).toBe(303);
    expect(text((await page(cookie, "/dashboard/webhooks")).html)).not.toContain("was disabled after");
    const enabled = await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key });
    expect(enabled.body.data).toMatchObject({ enabled: true, consecutiveFailures: 0, disabledReason: null });
    // A failed delivery can still be replayed by hand.
    const replay = await api(`/v1/webhook-endpoints/${endpoint.id}/deliveries/${first}/retry`, { key: who.key, method: "POST" });
    expect(replay.status, replay.text).toBeLessThan(300);
  });
});
