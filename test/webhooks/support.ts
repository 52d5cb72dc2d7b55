// Webhook tests' helpers: endpoints made through the API, pointing at the receiver stand-in
// (test/support/webhook-receiver.ts), the consumer driven with a message batch, and the receiver's inbox read back.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { WebhookMessage } from "../../src/core/webhooks/outbox.ts";
import type { PaywallRow, Tenant } from "../../src/db/schema.ts";
import worker from "../../src/index.ts";
import { randomHex } from "../../src/lib/ids.ts";
import { createPaywallFor } from "../history/support.ts";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import { RECEIVER_HOST, type ReceivedDelivery } from "../support/webhook-receiver.ts";

export const QUEUE = "paywall-webhooks";

export interface HookTenant {
  key: string;
  tenant: Tenant;
  paywall: PaywallRow;
}

/** A tenant with a full-scope key and a paywall to pay. */
export async function hookTenant(): Promise<HookTenant> {
  const { key, tenant } = await createApiKey();
  return { key, tenant, paywall: await createPaywallFor(tenant) };
}

/** A fresh inbox name at the receiver. */
export const newInbox = (label = "in") => `${label}-${randomHex(6)}`;

/** The receiver URL of an inbox (`query`: its behaviour, see webhook-receiver.ts). */
export const inboxUrl = (inbox: string, query = "") => `https://${RECEIVER_HOST}/inbox/${inbox}${query ? `?${query}` : ""}`;

export interface CreatedEndpoint {
  id: string;
  secret: string;
  url: string;
}

/** An endpoint made through the API, with the secret its creation answered. */
export async function createEndpoint(
  who: { key: string },
  url: string,
  events: string[] = ["transaction.completed", "transaction.failed", "transaction.pending"],
): Promise<CreatedEndpoint> {
  const res = await api("/v1/webhook-endpoints", { key: who.key, method: "POST", body: { url, events } });
  expect(res.status, res.text).toBe(201);
  const { id, secret } = res.body.data;
  return { id, secret, url };
}

/** What the receiver recorded in an inbox, oldest first. */
export async function received(inbox: string): Promise<ReceivedDelivery[]> {
  const res = await fetch(`https://${RECEIVER_HOST}/inbox/${inbox}`);
  return (await res.json()) as ReceivedDelivery[];
}

/** Pending delivery ids of an endpoint (the outbox), oldest first. */
export async function deliveryIds(endpointId: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at, id")
    .bind(endpointId)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

export interface ConsumerRun {
  /** What the handler threw, if it did. */
  error: unknown;
  acked: string[];
  retried: { msgId: string; delaySeconds?: number }[];
}

/**
 * One run of the Worker's queue handler over messages for these deliveries (`attempts`: the queue's count for each),
 * with the test environment or `overrides` (a faulty D1); its acknowledgements and retries, by delivery id.
 */
export async function runConsumer(
  deliveries: string[],
  options: { attempts?: number; queue?: string; env?: Partial<Env> } = {},
): Promise<ConsumerRun> {
  const batch = createMessageBatch<WebhookMessage>(
    options.queue ?? QUEUE,
    deliveries.map((deliveryId) => ({
      id: deliveryId,
      timestamp: new Date(),
      attempts: options.attempts ?? 1,
      body: { deliveryId },
    })),
  );
  const ctx = createExecutionContext();
  let error: unknown;
  try {
    await worker.queue(batch, { ...env, ...options.env } as Env);
  } catch (err) {
    error = err;
  }
  const result = await getQueueResult(batch, ctx);
  return { error, acked: result.explicitAcks, retried: result.retryMessages };
}

/** An endpoint's delivery log through the API. */
export async function deliveryLog(who: { key: string }, endpointId: string) {
  const res = await api(`/v1/webhook-endpoints/${endpointId}/deliveries`, { key: who.key });
  expect(res.status, res.text).toBe(200);
  return res.body.data as Array<Record<string, unknown> & { id: string; attemptLog: Record<string, unknown>[] }>;
}
