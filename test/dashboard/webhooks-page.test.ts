// The Webhooks page through the real Worker, signed in with a one-time link: an endpoint made by the form (its secret
// shown once), the delivery log with a test event and a retry, and another tenant's endpoint out of reach.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { giveUpWebhookDelivery } from "../../src/db/webhooks.ts";
import { api } from "../support/client.ts";
import { createApiKey, db } from "../support/factories.ts";
import { createEndpoint, deliveryIds, inboxUrl, newInbox } from "../webhooks/support.ts";
import { page, signIn, submit, text } from "./insights-support.ts";

const deliveryOf = (id: string) =>
  env.DB.prepare("SELECT status, next_attempt_at AS nextAttemptAt, error FROM webhook_deliveries WHERE id = ?")
    .bind(id)
    .first<{ status: string; nextAttemptAt: number | null; error: string | null }>();

describe("webhooks page", () => {
  it("creates an endpoint by form: 303, the secret shown once and gone on reload, the endpoint as the API lists it", async () => {
    const { key, tenant } = await createApiKey();
    const cookie = await signIn(tenant);
    const url = inboxUrl(newInbox("dash"));

    const created = await submit(cookie, "/dashboard/webhooks", {
      url,
      events: "transaction.completed",
      description: "Orders",
    });
    expect(created.status, created.html).toBe(303);
    expect(created.location).toMatch(/^\/dashboard\/webhooks\?shown=[0-9a-f]{32}$/);

    const first = await page(cookie, created.location as string);
    expect(first.status).toBe(200);
    const secret = /<code id="new-secret">(whsec_[^<]+)<\/code>/.exec(first.html)?.[1];
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(text(first.html)).toContain(`Copy the signing secret now. It is shown only this once; verify deliveries to ${url}`);

    const reload = await page(cookie, created.location as string);
    expect(reload.status).toBe(200);
    expect(reload.html).not.toContain(secret as string);
    expect(reload.html).not.toContain("whsec_");
    expect(text(reload.html)).toContain("The signing secret was shown once and is not shown again");

    const listed = await api("/v1/webhook-endpoints", { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({
      url,
      events: ["transaction.completed"],
      description: "Orders",
      enabled: true,
      consecutiveFailures: 0,
    });
    expect(text(reload.html)).toContain(`${url} Orders transaction.completed enabled 0`);
    expect(reload.html).toContain('aria-current="page">Webhooks</a>');
  });

  it("refuses an invalid form with the API's rules, next to the fields, creating nothing", async () => {
    const { key, tenant } = await createApiKey();
    const cookie = await signIn(tenant);
    const refused = await submit(cookie, "/dashboard/webhooks", { url: "http://10.0.0.1/hook" });
    expect(refused.status).toBe(400);
    expect(text(refused.html)).toContain("Events: Choose at least one");
    const blocked = await submit(cookie, "/dashboard/webhooks", { url: "http://10.0.0.1/hook", events: "transaction.failed" });
    expect(blocked.status).toBe(400);
    expect(blocked.html).toContain('id="new-url-error"');
    expect((await api("/v1/webhook-endpoints", { key })).body.data).toHaveLength(0);
  });

  it("sends a test event into the log, retries a failed delivery, and toggles the endpoint", async () => {
    const who = await createApiKey();
    const cookie = await signIn(who.tenant);
    const endpoint = await createEndpoint(who, inboxUrl(newInbox("log")));
    const base = `/dashboard/webhooks/${endpoint.id}`;

    const empty = await page(cookie, base);
    expect(empty.status).toBe(200);
    expect(text(empty.html)).toContain("No deliveries yet.");

    const sent = await submit(cookie, `${base}/test`, {});
    expect(sent.status, sent.html).toBe(303);
    expect(sent.location).toBe(`${base}?done=tested`);
    const [deliveryId] = await deliveryIds(endpoint.id);
    expect(deliveryId).toMatch(/^msg_test_/);
    const log = await page(cookie, sent.location as string);
    expect(text(log.html)).toContain("A test event is queued: it shows in the log below.");
    expect(text(log.html)).toContain(`test ${deliveryId} pending`);
    expect(log.html).not.toContain(`deliveries/${deliveryId}/retry`);

    await giveUpWebhookDelivery(db(), deliveryId as string, "gave up for the test");
    const failed = await page(cookie, base);
    expect(text(failed.html)).toContain(`test ${deliveryId} failed gave up for the test`);
    expect(failed.html).toContain(`action="${base}/deliveries/${deliveryId}/retry"`);

    const retried = await submit(cookie, `${base}/deliveries/${deliveryId}/retry`, {});
    expect(retried.status, retried.html).toBe(303);
    expect(retried.location).toBe(`${base}?done=retried`);
    expect(await deliveryOf(deliveryId as string)).toMatchObject({ status: "pending", error: null });
    expect((await deliveryOf(deliveryId as string))?.nextAttemptAt).not.toBeNull();

    const disabled = await submit(cookie, `${base}/disable`, {});
    expect(disabled.location).toBe(`${base}?done=disabled`);
    expect((await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key })).body.data.enabled).toBe(false);
    const enabled = await submit(cookie, `${base}/enable`, {});
    expect(enabled.location).toBe(`${base}?done=enabled`);
    expect((await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key })).body.data.enabled).toBe(true);
  });

  it("answers 404 for another tenant's endpoint, and its retry changes nothing", async () => {
    const owner = await createApiKey();
    const endpoint = await createEndpoint(owner, inboxUrl(newInbox("theirs")));
    const sent = await api(`/v1/webhook-endpoints/${endpoint.id}/test`, { key: owner.key, method: "POST" });
    expect(sent.status).toBe(202);
    const deliveryId = sent.body.data.id as string;
    await giveUpWebhookDelivery(db(), deliveryId, "given up");
    const stranger = await createApiKey();
    const cookie = await signIn(stranger.tenant);
    const base = `/dashboard/webhooks/${endpoint.id}`;

    for (const path of [base, `${base}/delete`]) {
      const seen = await page(cookie, path);
      expect(seen.status, path).toBe(404);
      expect(seen.html).not.toContain(endpoint.url);
    }
    for (const path of [`${base}/deliveries/${deliveryId}/retry`, `${base}/test`, `${base}/disable`, `${base}/delete`]) {
      expect((await submit(cookie, path, {})).status, path).toBe(404);
    }
    expect(await deliveryOf(deliveryId)).toMatchObject({ status: "failed", error: "given up" });
    expect(await deliveryIds(endpoint.id)).toEqual([deliveryId]);
    const still = await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: owner.key });
    expect(still.status).toBe(200);
    expect(still.body.data.enabled).toBe(true);
  });

  it("deletes an endpoint only after the confirmation step, through the dashboard's origin check", async () => {
    const who = await createApiKey();
    const cookie = await signIn(who.tenant);
    const endpoint = await createEndpoint(who, inboxUrl(newInbox("gone")));
    const base = `/dashboard/webhooks/${endpoint.id}`;

    const detail = await page(cookie, base);
    expect(detail.html).toContain(`href="${base}/delete"`);
    const confirm = await page(cookie, `${base}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain(`<button type="submit" class="danger">Delete endpoint ${endpoint.url}</button>`);
    expect((await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key })).status).toBe(200);

    const forged = await submit(cookie, `${base}/delete`, {}, "https://evil.example");
    expect(forged.status).toBe(403);
    expect((await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key })).status).toBe(200);

    const deleted = await submit(cookie, `${base}/delete`, {});
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe("/dashboard/webhooks?done=deleted");
    expect((await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key })).status).toBe(404);
    expect((await page(cookie, base)).status).toBe(404);
  });

  it("every change of an endpoint, by API or dashboard, is on the Activity page; a refused one is not", async () => {
    const who = await createApiKey();
    const cookie = await signIn(who.tenant);
    const url = inboxUrl(newInbox("audit"));
    const created = await api("/v1/webhook-endpoints", {
      key: who.key,
      method: "POST",
      body: { url, events: ["transaction.completed"] },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const moved = inboxUrl(newInbox("audit-moved"));
    expect((await api(`/v1/webhook-endpoints/${id}`, { key: who.key, method: "PATCH", body: { url: moved } })).status).toBe(200);
    expect(
      (await api(`/v1/webhook-endpoints/${id}/secret/roll`, { key: who.key, method: "POST", body: { gracePeriodSeconds: 3600 } }))
        .status,
    ).toBe(200);
    expect((await submit(cookie, `/dashboard/webhooks/${id}/disable`, {})).status).toBe(303);
    // Refused: a private address, and another tenant's endpoint. Neither is recorded.
    expect(
      (await api(`/v1/webhook-endpoints/${id}`, { key: who.key, method: "PATCH", body: { url: "http://10.0.0.1/" } })).status,
    ).toBe(400);
    const stranger = await createApiKey();
    expect((await api(`/v1/webhook-endpoints/${id}`, { key: stranger.key, method: "DELETE" })).status).toBe(404);
    expect((await submit(cookie, `/dashboard/webhooks/${id}/delete`, {})).status).toBe(303);

    const events = await env.DB.prepare(
      "SELECT action, subject, detail, actor FROM account_events WHERE tenant_id = ? AND action LIKE 'webhook-%' ORDER BY created_at, rowid",
    )
      .bind(who.tenant.id)
      .all<{ action: string; subject: string; detail: string | null; actor: string }>();
    expect(events.results).toEqual([
      { action: "webhook-endpoint-created", subject: url, detail: "transaction.completed", actor: "api" },
      { action: "webhook-endpoint-updated", subject: moved, detail: "url", actor: "api" },
      { action: "webhook-secret-rolled", subject: moved, detail: "the old secret valid 3600 s more", actor: "api" },
      { action: "webhook-endpoint-disabled", subject: moved, detail: null, actor: "dashboard" },
      { action: "webhook-endpoint-deleted", subject: moved, detail: null, actor: "dashboard" },
    ]);
    const activity = text((await page(cookie, "/dashboard/activity")).html);
    for (const what of [
      "Webhook endpoint created",
      "Webhook endpoint changed",
      "Webhook signing secret rolled",
      "Webhook endpoint disabled",
      "Webhook endpoint deleted",
    ]) {
      expect(activity).toContain(what);
    }
  });
});
