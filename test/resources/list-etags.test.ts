// Conditional requests on every list: each page carries a strong ETag that changes whenever anything the page shows
// changes (an item's field, an embedded paywall, a transaction's status, a paywall's name shown in history, the
// total), and an If-None-Match naming it answers 304 with no body. The services page served from the isolate's kept
// pages is always the page as stored now.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findPaywall } from "../../src/db/paywalls.ts";
import { type ApiResult, api } from "../support/client.ts";
import { db } from "../support/factories.ts";
import { completeRecorded, recordPayment } from "../support/payments.ts";
import { type Actor, actor, createPaywall, createService, routePaywallBody } from "../support/resources.ts";

const LIST_TAG = /^"l[0-9a-f]{32}"$/;
const etag = (r: ApiResult) => r.headers.get("etag") as string;

const get = (who: Actor, path: string, headers: Record<string, string> = {}) => api(path, { key: who.key, headers });
const patch = async (who: Actor, path: string, body: Record<string, unknown>) => {
  const res = await api(path, { key: who.key, method: "PATCH", body });
  expect(res.status, res.text).toBe(200);
};

/** GET the list: a 200 with a list tag; the same GET with that tag in If-None-Match: 304, no body, the same tag. */
async function tagOf(who: Actor, path: string): Promise<{ tag: string; body: ApiResult["body"] }> {
  const res = await get(who, path);
  expect(res.status, res.text).toBe(200);
  const tag = etag(res);
  expect(tag).toMatch(LIST_TAG);
  const again = await get(who, path, { "if-none-match": tag });
  expect(again.status).toBe(304);
  expect(again.text).toBe("");
  expect(etag(again)).toBe(tag);
  return { tag, body: res.body };
}

/** After a change the old tag no longer matches: If-None-Match with it gets the full 200 with a new tag. */
async function expectChanged(who: Actor, path: string, old: string) {
  const res = await get(who, path, { "if-none-match": old });
  expect(res.status, `${path} still answers 304 to the tag from before the change`).toBe(200);
  expect(etag(res)).toMatch(LIST_TAG);
  expect(etag(res)).not.toBe(old);
  return res;
}

async function catalog(who: Actor) {
  const service = await createService(who);
  const paywall = await createPaywall(who, routePaywallBody(service.id));
  return { service, paywall };
}

describe("list ETags", () => {
  it("every list answers with a strong list tag, stable while nothing changes; If-None-Match of it is 304, *, weak too", async () => {
    const who = await actor();
    await catalog(who);
    for (const path of ["/v1/services", "/v1/paywalls?limit=100", "/v1/transactions", "/v1/events"]) {
      const { tag } = await tagOf(who, path);
      expect(etag(await get(who, path))).toBe(tag);
      expect((await get(who, path, { "if-none-match": `W/${tag}` })).status).toBe(304);
      expect((await get(who, path, { "if-none-match": `"v1", ${tag}` })).status).toBe(304);
      expect((await get(who, path, { "if-none-match": "*" })).status).toBe(304);
      expect((await get(who, path, { "if-none-match": '"l0"' })).status).toBe(200);
    }
  });

  it("a page's tag is its own: another page, filter or tenant has another tag", async () => {
    const who = await actor();
    await catalog(who);
    await catalog(who);
    const first = await tagOf(who, "/v1/services?limit=1");
    const second = await tagOf(who, "/v1/services?limit=1&offset=1");
    expect(second.tag).not.toBe(first.tag);
    const other = await actor();
    await catalog(other);
    expect((await get(other, "/v1/services?limit=1", { "if-none-match": first.tag })).status).toBe(200);
  });

  it("services: a service's change, its paywall's change, a new service and a deletion each change the tag and the page", async () => {
    const who = await actor();
    const { service, paywall } = await catalog(who);
    const path = "/v1/services?limit=20";
    let { tag } = await tagOf(who, path);

    await patch(who, `/v1/services/${service.id}`, { name: "Renamed service" });
    let res = await expectChanged(who, path, tag);
    expect(res.body.data[0].name).toBe("Renamed service");
    tag = etag(res);

    // Only the embedded paywall changes: the service row itself is not written by the API.
    await patch(who, `/v1/paywalls/${paywall.id}`, { name: "Renamed paywall" });
    res = await expectChanged(who, path, tag);
    expect(res.body.data[0].Paywall[0].name).toBe("Renamed paywall");
    tag = etag(res);

    await createService(who, { name: "Second" });
    res = await expectChanged(who, path, tag);
    expect(res.body.data.map((s: { name: string }) => s.name)).toEqual(["Second", "Renamed service"]);
    expect(res.body.meta.pagination.total).toBe(2);
    tag = etag(res);

    expect((await api(`/v1/paywalls/${paywall.id}`, { key: who.key, method: "DELETE" })).status).toBe(200);
    res = await expectChanged(who, path, tag);
    expect(res.body.data[1].Paywall).toEqual([]);
  });

  it("services: the page kept by the isolate is the stored one, at every step of a series of changes", async () => {
    const who = await actor();
    const { service } = await catalog(who);
    const path = "/v1/services";
    for (const name of ["a", "b", "a", "c"]) {
      await patch(who, `/v1/services/${service.id}`, { name });
      const cached = await get(who, path);
      expect(cached.status).toBe(200);
      expect(cached.body.data[0].name).toBe(name);
      const one = await get(who, `/v1/services/${service.id}`);
      expect(cached.body.data[0]).toEqual(one.body.data);
      expect(cached.body.meta.requestId).not.toBe((await get(who, path)).body.meta.requestId);
    }
  });

  it("services and paywalls pages kept per catalog version: any write, through any path, is on the next read", async () => {
    const who = await actor();
    const { service, paywall } = await catalog(who);
    for (const path of ["/v1/services", "/v1/paywalls"]) {
      const { tag } = await tagOf(who, path);
      // A write that bypasses the API (an operator's SQL, a migration): the catalog version moves all the same.
      await env.DB.prepare("UPDATE paywalls SET name = ? WHERE id = ?").bind(`Renamed under ${path}`, paywall.id).run();
      const res = await expectChanged(who, path, tag);
      const shown = path === "/v1/services" ? res.body.data[0].Paywall[0] : res.body.data[0];
      expect(shown.name).toBe(`Renamed under ${path}`);
    }
    // A write of another tenant's catalog changes nothing here, and its pages are never this tenant's.
    const before = await tagOf(who, "/v1/services");
    const other = await actor();
    await catalog(other);
    expect((await get(who, "/v1/services", { "if-none-match": before.tag })).status).toBe(304);
    const theirs = await get(other, "/v1/services");
    expect(theirs.body.data.map((s: { id: string }) => s.id)).not.toContain(service.id);
    // A deleted service is gone from the next page.
    expect((await api(`/v1/services/${service.id}`, { key: who.key, method: "DELETE" })).status).toBe(200);
    expect((await expectChanged(who, "/v1/services", before.tag)).body.data).toEqual([]);
  });

  it("paywalls: a change of any paywall on the page, or a new one, changes the tag", async () => {
    const who = await actor();
    const { paywall } = await catalog(who);
    const path = "/v1/paywalls";
    let { tag } = await tagOf(who, path);
    await patch(who, `/v1/paywalls/${paywall.id}`, { enabled: false });
    let res = await expectChanged(who, path, tag);
    expect(res.body.data[0].enabled).toBe(false);
    tag = etag(res);
    await createPaywall(who, routePaywallBody(paywall.serviceId as string));
    res = await expectChanged(who, path, tag);
    expect(res.body.meta.pagination.total).toBe(2);
  });

  it("transactions: a payment's status moving in place (same ids, same total) changes the tag", async () => {
    const who = await actor();
    const { paywall } = await catalog(who);
    const row = await findPaywall(db(), paywall.id);
    const ref = await recordPayment(row!, { status: "PENDING" });
    const path = "/v1/transactions";
    const { tag, body } = await tagOf(who, path);
    expect(body.data[0].status).toBe("PENDING");
    await completeRecorded(ref);
    const res = await expectChanged(who, path, tag);
    expect(res.body.data[0].status).toBe("COMPLETED");
    expect(res.body.meta.pagination.total).toBe(1);
  });

  it("events: a renamed paywall shown on the page, and a new event, change the tag", async () => {
    const who = await actor();
    const { paywall } = await catalog(who);
    const row = await findPaywall(db(), paywall.id);
    const ref = await recordPayment(row!, { status: "PENDING" });
    const path = "/v1/events";
    let { tag } = await tagOf(who, path);
    await patch(who, `/v1/paywalls/${paywall.id}`, { name: "Shown in history" });
    let res = await expectChanged(who, path, tag);
    expect(res.body.data[0].Paywall.name).toBe("Shown in history");
    tag = etag(res);
    await completeRecorded(ref);
    res = await expectChanged(who, path, tag);
    expect(res.body.data.length).toBe(2);
  });
});

describe("item ETags of resources without a version", () => {
  const ITEM_TAG = /^"c[0-9a-f]{32}"$/;

  /** GET the item: a 200 with a content tag; with that tag in If-None-Match: 304, no body, the same tag. */
  async function itemTag(who: Actor, path: string): Promise<string> {
    const res = await get(who, path);
    expect(res.status, res.text).toBe(200);
    const tag = etag(res);
    expect(tag, path).toMatch(ITEM_TAG);
    expect(etag(await get(who, path)), `${path}: stable while nothing changes`).toBe(tag);
    const again = await get(who, path, { "if-none-match": tag });
    expect(again.status, path).toBe(304);
    expect(again.text).toBe("");
    expect(etag(again)).toBe(tag);
    expect((await get(who, path, { "if-none-match": `W/${tag}` })).status).toBe(304);
    return tag;
  }

  async function changedFrom(who: Actor, path: string, old: string) {
    const res = await get(who, path, { "if-none-match": old });
    expect(res.status, `${path} still answers 304 to the tag from before the change`).toBe(200);
    expect(etag(res)).toMatch(ITEM_TAG);
    expect(etag(res)).not.toBe(old);
    return res;
  }

  it("a transaction, its events, a webhook endpoint and a discovery preview: 304 while unchanged, a new tag after a change", async () => {
    const who = await actor();
    const { service, paywall } = await catalog(who);
    const ref = await recordPayment((await findPaywall(db(), paywall.id))!, { status: "PENDING" });
    const transaction = `/v1/transactions/${ref.transactionId}`;
    let tag = await itemTag(who, transaction);
    await completeRecorded(ref);
    expect((await changedFrom(who, transaction, tag)).body.data.status).toBe("COMPLETED");

    const events = (await get(who, "/v1/events")).body.data as { id: string }[];
    expect(events.length).toBeGreaterThan(0);
    const tags = await Promise.all(events.map((e) => itemTag(who, `/v1/events/${e.id}`)));
    expect(new Set(tags).size).toBe(events.length);

    const created = await api("/v1/webhook-endpoints", {
      key: who.key,
      method: "POST",
      body: { url: "https://hooks.example.com/etag", events: ["transaction.completed"] },
    });
    const endpoint = `/v1/webhook-endpoints/${created.body.data.id}`;
    tag = await itemTag(who, endpoint);
    await patch(who, endpoint, { enabled: false });
    expect((await changedFrom(who, endpoint, tag)).body.data.enabled).toBe(false);

    const preview = `/v1/services/${service.id}/discovery`;
    tag = await itemTag(who, preview);
    await patch(who, `/v1/paywalls/${paywall.id}`, { price: "777" });
    await changedFrom(who, preview, tag);
    // Another tenant never gets a 304 for them, whatever tag it sends: the item is refused first.
    const other = await actor();
    const transactionTag = etag(await get(who, transaction));
    expect((await get(other, transaction, { "if-none-match": transactionTag })).status).toBe(403);
  });
});
