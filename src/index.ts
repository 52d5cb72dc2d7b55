import type { RecordsMessage } from "./core/ledger/payment-object.ts";
import { handlePaymentRecordsBatch, RECORDS_QUEUE_PREFIX } from "./core/ledger/records-queue.ts";
import { handleWebhookBatch } from "./core/webhooks/deliver.ts";
import { queueOutbox, resendOverdueDeliveries, type WebhookMessage } from "./core/webhooks/outbox.ts";
import { SESSION_IDLE_MS } from "./dashboard/session.ts";
import { getDb } from "./db/client.ts";
import { deleteExpiredSignInRows } from "./db/dashboard.ts";
import { deleteExpiredIdempotencyKeys } from "./db/idempotency.ts";
import { deleteExpiredPaidAnswers } from "./db/paid-answers.ts";
import { PAYMENT_SWEEP_CRON, sweepPendingPayments } from "./gateway/sweep.ts";
import { createWorker } from "./worker.ts";

export { FacilitatorHealthObject } from "./core/facilitators/health-object.ts";
export { RateLimiter } from "./core/rate-limit/durable-object.ts";
export { ChannelObject } from "./core/sessions/channel-object.ts";
export { PaymentCoordinator } from "./gateway/coordinator.ts";

const worker = createWorker();

export default {
  fetch: worker.fetch,
  /**
   * The Cron Triggers of wrangler.toml. Every five minutes: settles the gateway's PENDING payments from the chain
   * (src/gateway/sweep.ts), then sends the webhook deliveries that are overdue (their queue message was never sent,
   * or lost) to the queue again. Hourly: deletes idempotency records past their 24 hours, the dashboard's expired
   * SIWE nonces, sign-in links and sessions, and paid answers past their window (src/db/paid-answers.ts).
   */
  async scheduled(controller, env) {
    if (controller.cron === PAYMENT_SWEEP_CRON) {
      const now = new Date(controller.scheduledTime);
      // The deliveries the sweep's moves record are sent before the run ends.
      const sends: Promise<unknown>[] = [];
      const swept = await sweepPendingPayments(env, now, undefined, queueOutbox(env, { waitUntil: (p) => sends.push(p) }));
      await Promise.all(sends);
      const resent = await resendOverdueDeliveries(env, now);
      console.log(JSON.stringify({ cron: controller.cron, task: "payment-sweep", ...swept, webhooksResent: resent }));
      return;
    }
    const db = getDb(env.DB);
    const now = new Date(controller.scheduledTime);
    const deleted = await deleteExpiredIdempotencyKeys(db, now);
    console.log(JSON.stringify({ cron: controller.cron, task: "idempotency-cleanup", deleted }));
    const signIn = await deleteExpiredSignInRows(db, now, new Date(now.getTime() - SESSION_IDLE_MS));
    console.log(JSON.stringify({ cron: controller.cron, task: "sign-in-cleanup", deleted: signIn }));
    const answers = await deleteExpiredPaidAnswers(db, now);
    console.log(JSON.stringify({ cron: controller.cron, task: "paid-answer-cleanup", deleted: answers }));
  },
  /**
   * The queues of wrangler.toml, each with its dead-letter queue: payment records (src/core/ledger/records-queue.ts)
   * and webhook deliveries (src/core/webhooks/deliver.ts).
   */
  async queue(batch, env) {
    if (batch.queue.startsWith(RECORDS_QUEUE_PREFIX))
      return handlePaymentRecordsBatch(batch as MessageBatch<RecordsMessage>, env);
    await handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env);
  },
} satisfies ExportedHandler<Env, WebhookMessage | RecordsMessage>;
