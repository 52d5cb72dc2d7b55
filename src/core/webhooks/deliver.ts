// The webhooks queue's consumer: each message is one attempt of one delivery, signed (Standard Webhooks) and POSTed
// to its endpoint, recorded, then acknowledged or retried with backoff. At least once: a message is acknowledged
// only after its attempt is recorded, so a consumer that dies mid-batch leaves the rest to the queue's redelivery,
// and every attempt of a delivery carries the same `webhook-id`.
import { getDb } from "../../db/client.ts";
import type { WebhookDeliveryRow, WebhookEndpointRow } from "../../db/schema.ts";
import { findTransaction } from "../../db/transactions.ts";
import { findDeliveryToSend, giveUpWebhookDelivery, recordWebhookAttempt } from "../../db/webhooks.ts";
import { responseExcerpt, webhookHeaders } from "../../lib/standard-webhooks.ts";
import { getConfig, keyRing } from "../config.ts";
import { toTransactionJson } from "../transactions.ts";
import { checkWebhookUrl } from "./endpoint-url.ts";
import { eventBody } from "./events.ts";
import type { WebhookMessage } from "./outbox.ts";
import { retryDelaySeconds, WEBHOOK_DISABLE_AFTER, WEBHOOK_RESPONSE_EXCERPT_BYTES, WEBHOOK_TIMEOUT_MS } from "./schedule.ts";
import { signingSecrets } from "./secrets.ts";

/** The dead-letter queue's name ends so (wrangler.toml); its messages are deliveries the consumer could not process. */
const DEAD_LETTER_SUFFIX = "-dlq";

/** What one attempt came to. */
export interface AttemptOutcome {
  ok: boolean;
  responseStatus: number | null;
  latencyMs: number | null;
  responseBody: string | null;
  /** Why it failed, in words for the tenant; null on success. */
  error: string | null;
}

/**
 * The queue handler (src/index.ts `queue`). Messages are attempted side by side; each is acknowledged or retried
 * once its attempt is recorded. If any could not be processed (the database failed), the handler throws after the
 * others finished, and the queue redelivers every message not yet acknowledged.
 */
export async function handleWebhookBatch(batch: MessageBatch<WebhookMessage>, env: Env): Promise<void> {
  if (batch.queue.endsWith(DEAD_LETTER_SUFFIX)) return deadLetters(batch, env);
  const results = await Promise.allSettled(batch.messages.map((message) => processMessage(message, env)));
  const failed = results.filter((r) => r.status === "rejected").length;
  if (failed > 0) {
    console.error(JSON.stringify({ webhooks: "batch-incomplete", failed, messages: batch.messages.length }));
    throw new Error(`${failed} of ${batch.messages.length} webhook messages could not be processed`);
  }
}

/** Messages the consumer could not process `max_retries` times: their deliveries are recorded failed. */
async function deadLetters(batch: MessageBatch<WebhookMessage>, env: Env): Promise<void> {
  const db = getDb(env.DB);
  for (const message of batch.messages) {
    await giveUpWebhookDelivery(db, message.body.deliveryId, "could not be processed (dead-lettered); retry it");
    console.warn(JSON.stringify({ webhooks: "dead-lettered", deliveryId: message.body.deliveryId }));
    message.ack();
  }
}

async function processMessage(message: Message<WebhookMessage>, env: Env): Promise<void> {
  const db = getDb(env.DB);
  const found = await findDeliveryToSend(db, message.body.deliveryId);
  // Gone (its endpoint was deleted), or already delivered or given up (a duplicate message): nothing to do.
  if (found?.delivery.status !== "pending") return message.ack();
  const { delivery, endpoint } = found;
  if (!endpoint.enabled) {
    await giveUpWebhookDelivery(db, delivery.id, "the endpoint is disabled");
    return message.ack();
  }
  const payload = delivery.payload ?? (await bodyOf(env, delivery));
  if (payload === null) {
    await giveUpWebhookDelivery(db, delivery.id, "the event's transaction no longer exists");
    return message.ack();
  }

  const now = new Date();
  const outcome = await attemptDelivery(env, endpoint, delivery.id, payload, now);
  const attempts = delivery.attempts + 1;
  const disables = !outcome.ok && endpoint.consecutiveFailures + 1 >= WEBHOOK_DISABLE_AFTER;
  const delay = outcome.ok || disables ? null : retryDelaySeconds(attempts);
  await recordWebhookAttempt(db, {
    deliveryId: delivery.id,
    endpointId: endpoint.id,
    at: now,
    payload,
    ...outcome,
    status: outcome.ok ? "delivered" : delay === null ? "failed" : "pending",
    nextAttemptAt: delay === null ? null : new Date(now.getTime() + delay * 1000),
    disableAfter: WEBHOOK_DISABLE_AFTER,
  });
  if (disables) {
    console.warn(JSON.stringify({ webhooks: "endpoint-disabled", endpointId: endpoint.id, tenantId: endpoint.tenantId }));
  }
  if (delay === null) message.ack();
  else message.retry({ delaySeconds: delay });
}

/** The body a delivery sends, fixed at its first attempt: `test` events carry theirs from the start. */
async function bodyOf(env: Env, delivery: WebhookDeliveryRow): Promise<string | null> {
  if (!delivery.transactionId) return null;
  const transaction = await findTransaction(getDb(env.DB), delivery.transactionId);
  if (!transaction) return null;
  return eventBody(delivery.eventType as never, delivery.createdAt, toTransactionJson(transaction));
}

/**
 * One attempt: the URL checked again (an address rule may refuse what was accepted earlier, and a loopback URL is
 * accepted only under `npm run dev`), signed with every valid secret, POSTed without following redirects, with a
 * timeout. Never throws for the endpoint's sake: every way it can fail is an outcome.
 */
export async function attemptDelivery(
  env: Env,
  endpoint: WebhookEndpointRow,
  deliveryId: string,
  payload: string,
  now: Date,
): Promise<AttemptOutcome> {
  const verdict = checkWebhookUrl(endpoint.url, getConfig(env));
  if (!verdict.allowed) {
    return { ok: false, responseStatus: null, latencyMs: null, responseBody: null, error: `not sent: ${verdict.message}` };
  }
  const secrets = await signingSecrets(keyRing(env), endpoint, now);
  const headers = await webhookHeaders(secrets, deliveryId, Math.floor(now.getTime() / 1000), payload);
  const started = Date.now();
  let response: Response;
  try {
    response = await fetch(verdict.url.href, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "user-agent": "paywall-webhooks/1" },
      body: payload,
      redirect: "manual",
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return {
      ok: false,
      responseStatus: null,
      latencyMs: Date.now() - started,
      responseBody: null,
      error: timedOut ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s` : "could not connect",
    };
  }
  const latencyMs = Date.now() - started;
  const responseBody = await readExcerpt(response);
  const status = response.status;
  const ok = status >= 200 && status < 300;
  const error = ok
    ? null
    : status >= 300 && status < 400
      ? `answered ${status} (a redirect, not followed: point the endpoint at the final URL)`
      : `answered ${status}`;
  return { ok, responseStatus: status, latencyMs, responseBody, error };
}

/** The first bytes of the answer, as text (see `responseExcerpt`); the rest is not read. */
async function readExcerpt(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < WEBHOOK_RESPONSE_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
  } catch {
    // A body that breaks off: what arrived is kept.
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return responseExcerpt(bytes, response.headers.get("content-type"), WEBHOOK_RESPONSE_EXCERPT_BYTES);
}
