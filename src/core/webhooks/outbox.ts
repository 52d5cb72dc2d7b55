// From the outbox to the queue: the delivery rows a ledger move (or a tenant's test or retry) wrote are sent to the
// webhooks queue after their batch, without delaying the request; the five-minute sweep sends again what is overdue
// (a send lost between the batch and the queue), so an event is never lost, only later.
import { getDb } from "../../db/client.ts";
import { takeOverdueWebhookDeliveries } from "../../db/webhooks.ts";
import { WEBHOOK_OVERDUE_MS } from "./schedule.ts";

/** What a webhooks queue message carries: the delivery to attempt. */
export interface WebhookMessage {
  deliveryId: string;
}

/** Where the ledger's moves hand the deliveries they recorded. */
export interface Outbox {
  deliveries(ids: readonly string[]): void;
}

/** Sends the deliveries to the queue (at most 100 messages per send). */
export async function enqueueDeliveries(queue: Queue, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 100) {
    await queue.sendBatch(ids.slice(i, i + 100).map((deliveryId) => ({ body: { deliveryId } satisfies WebhookMessage })));
  }
}

/**
 * The outbox of a request or a Cron run: the deliveries go to the queue under `waitUntil`. A failed send is logged
 * and left to the sweep (the rows are pending either way).
 */
export function queueOutbox(env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }): Outbox {
  return {
    deliveries(ids) {
      if (ids.length === 0) return;
      ctx.waitUntil(
        enqueueDeliveries(env.WEBHOOKS_QUEUE, ids).catch((err: unknown) => {
          console.warn(
            JSON.stringify({
              webhooks: "enqueue-failed",
              deliveries: ids.length,
              error: err instanceof Error ? err.name : "unknown",
            }),
          );
        }),
      );
    },
  };
}

/** Deliveries taken per sweep run. */
export const WEBHOOK_SWEEP_BATCH = 500;

/** The sweep's part: pending deliveries overdue by `WEBHOOK_OVERDUE_MS` are sent to the queue again. */
export async function resendOverdueDeliveries(env: Env, now: Date): Promise<number> {
  const ids = await takeOverdueWebhookDeliveries(
    getDb(env.DB),
    new Date(now.getTime() - WEBHOOK_OVERDUE_MS),
    now,
    WEBHOOK_SWEEP_BATCH,
  );
  await enqueueDeliveries(env.WEBHOOKS_QUEUE, ids);
  return ids.length;
}
