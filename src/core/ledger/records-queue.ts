// The payment-records queue (wrangler.toml): each payment's object sends its records as one message
// (src/core/ledger/payment-object.ts), and so does each session's channel object (src/core/sessions/); the consumer
// writes a whole batch of messages, many payments, to D1 in one batch of at most five statements
// (`applyPaymentRecords`), tells each sending object its records landed, and hands the webhook deliveries the batch
// wrote to the webhooks queue. A batch that fails is retried by the queue, backing off, then goes to the dead-letter
// queue, whose consumer applies it the same way; the objects keep their records until told they landed and send them
// again otherwise, so a record is never lost, only later.
import { getDb } from "../../db/client.ts";
import { applyPaymentRecords } from "../../db/ledger.ts";
import type { ChannelObject } from "../sessions/channel-object.ts";
import { enqueueDeliveries } from "../webhooks/outbox.ts";
import { parseRecord, READ_MODEL_MOVES, type RecordsMessage } from "./payment-object.ts";
import type { PaymentObjects } from "./recorded.ts";

/** The objects a records message may come from: a payment's, or a session channel's (`channel` names it). */
type RecordObjects = PaymentObjects & { CHANNELS: DurableObjectNamespace<ChannelObject> };

/** The object that sent `message`, told its records numbered `seqs` landed. */
const reportLanded = (env: RecordObjects, { channel, transactionId, seqs }: RecordsMessage) =>
  channel === undefined
    ? env.PAYMENT_COORDINATOR.getByName(transactionId).recordsLanded(seqs)
    : env.CHANNELS.getByName(channel).recordsLanded(seqs);

/** The payment-records queues' names (and their dead-letter queues') begin so (wrangler.toml). */
export const RECORDS_QUEUE_PREFIX = "payment-records";

/** A failed batch is delivered again after 1 s, 2 s, 4 s, … at most this long apart (seconds). */
const RETRY_MAX_SECONDS = 60;

/**
 * The consumer of the payment-records queue and of its dead-letter queue: the batch's records in one D1 batch, then
 * each object told (a report lost there only means the records are sent again, and recorded once). D1 failing, the
 * whole batch is retried later.
 */
export async function handlePaymentRecordsBatch(
  batch: MessageBatch<RecordsMessage>,
  env: RecordObjects & { DB: D1Database; WEBHOOKS_QUEUE: Queue },
): Promise<void> {
  let deliveries: string[];
  try {
    deliveries = await applyPaymentRecords(
      getDb(env.DB),
      batch.messages.flatMap((m) => m.body.records.map(parseRecord)),
      READ_MODEL_MOVES,
    );
  } catch (err) {
    const attempts = Math.max(...batch.messages.map((m) => m.attempts));
    console.warn(
      JSON.stringify({
        records: "apply-failed",
        queue: batch.queue,
        messages: batch.messages.length,
        attempts,
        error: err instanceof Error ? err.name : "unknown",
      }),
    );
    batch.retryAll({ delaySeconds: Math.min(RETRY_MAX_SECONDS, 2 ** (attempts - 1)) });
    return;
  }
  await Promise.all(batch.messages.filter((m) => m.body.seqs.length > 0).map((m) => reportLanded(env, m.body).catch(() => {})));
  // A send lost here is resent by the webhook sweep (the rows are pending either way).
  await enqueueDeliveries(env.WEBHOOKS_QUEUE, deliveries).catch(() => {});
  batch.ackAll();
}
