// The webhook endpoints API: URLs held to the upstream-URL rules (loopback only under `npm run dev`), the secret shown
// once and rolled with a grace period, another tenant's endpoints and deliveries answered as unknown, and the real
// queue binding delivering a test event.
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { completeRecorded, recordPayment } from "../support/payments.ts";
import { createEndpoint, deliveryIds, hookTenant, inboxUrl, newInbox, received, runConsumer } from "./support.ts";

const create = (key: string, url: string, options: { env?: Partial<Env> } = {}) =>
  api("/v1/webhook-endpoints", {
    key,
    method: "POST",
    body: { url, events: ["transaction.completed"] },
    ...(options.env ? { env: options.env } : {}),
  });

describe("webhook endpoint URLs", () => {
  it.each([
    "http://10.0.0.7/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]:3000/hook",
    "http://localhost:4000/hook",
    "http://127.0.0.1:8080/hook",
    "https://hooks.internal/x",
    "ftp://hooks.example.com/x",
  ])("refuses %s at creation and as a change", async (url) => {
    const who = await hookTenant();
    const res = await create(who.key, url);
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe("SSRF_BLOCKED");
    expect(res.body.details).toEqual([{ path: "url", message: res.body.error, reason: expect.any(String) }]);
    const endpoint = await createEndpoint(who, inboxUrl(newInbox()));
    const patched = await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key, method: "PATCH", body: { url } });
    expect(patched.body.code).toBe("SSRF_BLOCKED");
  });

  it("allows this machine only under npm run dev: the dev-only var and a loopback payment origin, never by default", async () => {
    const who = await hookTenant();
    // wrangler.toml (the production configuration) never sets it.
    expect((env as unknown as Record<string, unknown>).WEBHOOKS_ALLOW_LOOPBACK).toBeUndefined();
    expect((await create(who.key, "http://localhost:4000/hook")).body.code).toBe("SSRF_BLOCKED");
    // The var alone, on a deployed payment origin: still refused.
    const varOnly = { WEBHOOKS_ALLOW_LOOPBACK: "on" } as Partial<Env>;
    expect((await create(who.key, "http://localhost:4000/hook", { env: varOnly })).body.code).toBe("SSRF_BLOCKED");
    // What `npm run dev` passes: loopback is allowed, and nothing else is loosened.
    const dev = { WEBHOOKS_ALLOW_LOOPBACK: "on", PAYMENT_BASE_URL: "http://127.0.0.1:8787" } as Partial<Env>;
    for (const url of ["http://localhost:4000/hook", "http://127.0.0.1:4000/hook", "http://[::1]:4000/hook"]) {
      expect((await create(who.key, url, { env: dev })).status, url).toBe(201);
    }
    expect((await create(who.key, "http://10.0.0.7/hook", { env: dev })).body.code).toBe("SSRF_BLOCKED");
    expect((await create(who.key, "http://user:pw@localhost:4000/hook", { env: dev })).body.code).toBe("SSRF_BLOCKED");
  });
});

describe("webhook endpoints", () => {
  it("shows the secret once: never in a read, a list, or a stored row in clear", async () => {
    const who = await hookTenant();
    const endpoint = await createEndpoint(who, inboxUrl(newInbox()));
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key });
    const list = await api("/v1/webhook-endpoints", { key: who.key });
    for (const res of [read, list]) {
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(endpoint.secret.slice(6));
      expect(res.text).not.toContain('"secret"');
    }
    expect(list.body.meta.pagination).toMatchObject({ total: 1, limit: 20, offset: 0, hasMore: false });
    const row = await env.DB.prepare("SELECT secret FROM webhook_endpoints WHERE id = ?")
      .bind(endpoint.id)
      .first<{ secret: string }>();
    expect(row!.secret).toMatch(/^v1\./);
    expect(row!.secret).not.toContain(endpoint.secret.slice(6));
  });

  it("lists endpoints and deliveries with an ETag: 304 while nothing changed, a new tag after a change", async () => {
    const who = await hookTenant();
    const endpoint = await createEndpoint(who, inboxUrl(newInbox()));
    for (const path of ["/v1/webhook-endpoints", `/v1/webhook-endpoints/${endpoint.id}/deliveries`]) {
      const first = await api(path, { key: who.key });
      const etag = first.headers.get("etag");
      expect(etag, path).toMatch(/^"[^"]+"$/);
      const again = await api(path, { key: who.key, headers: { "if-none-match": etag as string } });
      expect(again.status, path).toBe(304);
      expect(again.text, path).toBe("");
    }
    const list = await api("/v1/webhook-endpoints", { key: who.key });
    await api(`/v1/webhook-endpoints/${endpoint.id}`, { key: who.key, method: "PATCH", body: { enabled: false } });
    const changed = await api("/v1/webhook-endpoints", {
      key: who.key,
      headers: { "if-none-match": list.headers.get("etag") as string },
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(list.headers.get("etag"));
  });

  it("rolls the secret: both sign during the grace period, the old one is dropped without one", async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox), ["transaction.completed"]);
    const rolled = await api(`/v1/webhook-endpoints/${endpoint.id}/secret/roll`, {
      key: who.key,
      method: "POST",
      body: { gracePeriodSeconds: 3600 },
    });
    expect(rolled.status, rolled.text).toBe(200);
    const fresh = rolled.body.data.secret as string;
    expect(fresh).not.toBe(endpoint.secret);
    expect(rolled.body.data.previousSecretExpiresAt).toEqual(expect.any(String));

    await completeRecorded(await recordPayment(who.paywall));
    await runConsumer(await deliveryIds(endpoint.id));
    const [during] = await received(inbox);
    expect(during!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [fresh, endpoint.secret])
      expect(() => new Webhook(secret).verify(during!.body, during!.headers)).not.toThrow();

    const again = await api(`/v1/webhook-endpoints/${endpoint.id}/secret/roll`, {
      key: who.key,
      method: "POST",
      body: { gracePeriodSeconds: 0 },
    });
    const newest = again.body.data.secret as string;
    await completeRecorded(await recordPayment(who.paywall));
    const ids = await deliveryIds(endpoint.id);
    await runConsumer(ids.slice(-1));
    const after = (await received(inbox)).find((g) => g.headers["webhook-id"] === ids.at(-1));
    expect(() => new Webhook(newest).verify(after!.body, after!.headers)).not.toThrow();
    for (const old of [fresh, endpoint.secret]) expect(() => new Webhook(old).verify(after!.body, after!.headers)).toThrow();
  });

  it("another tenant can neither see nor retry a delivery: every path answers 404 as for an unknown id", async () => {
    const a = await hookTenant();
    const b = await hookTenant();
    const endpoint = await createEndpoint(a, inboxUrl(newInbox()), ["transaction.completed"]);
    const own = await createEndpoint(b, inboxUrl(newInbox()));
    await completeRecorded(await recordPayment(a.paywall));
    const [deliveryId] = await deliveryIds(endpoint.id);
    const attempts = [
      api(`/v1/webhook-endpoints/${endpoint.id}`, { key: b.key }),
      api(`/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: b.key }),
      api(`/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveryId}/retry`, { key: b.key, method: "POST" }),
      api(`/v1/webhook-endpoints/${own.id}/deliveries/${deliveryId}/retry`, { key: b.key, method: "POST" }),
      api(`/v1/webhook-endpoints/${endpoint.id}/test`, { key: b.key, method: "POST" }),
      api(`/v1/webhook-endpoints/${endpoint.id}`, { key: b.key, method: "DELETE" }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 404, code: "NOT_FOUND" });
      expect(res.text).not.toContain(deliveryId);
    }
    const list = await api("/v1/webhook-endpoints", { key: b.key });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([own.id]);
    const row = await env.DB.prepare("SELECT status, attempts, next_attempt_at FROM webhook_deliveries WHERE id = ?")
      .bind(deliveryId)
      .first();
    expect(row).toEqual({ status: "pending", attempts: 0, next_attempt_at: null });
  });

  it("sends a test event through the real queue binding to the receiver", { timeout: 30_000 }, async () => {
    const who = await hookTenant();
    const inbox = newInbox();
    const endpoint = await createEndpoint(who, inboxUrl(inbox));
    const res = await api(`/v1/webhook-endpoints/${endpoint.id}/test`, { key: who.key, method: "POST" });
    expect(res.status, res.text).toBe(202);
    expect(res.body.data).toMatchObject({ eventType: "test", status: "pending", attempts: 0 });
    let got = await received(inbox);
    for (let i = 0; i < 100 && got.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      got = await received(inbox);
    }
    expect(got).toHaveLength(1);
    const event = new Webhook(endpoint.secret).verify(got[0]!.body, got[0]!.headers);
    expect(event).toMatchObject({ type: "test", data: { endpointId: endpoint.id } });
    expect(got[0]!.headers["webhook-id"]).toBe(res.body.data.id);
  });
});
