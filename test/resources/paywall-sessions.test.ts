// The paywall's `sessions` setting (docs/sessions.md, "For tenants: turning sessions on"): off by default, set on
// create and update as a whole, answered on every paywall response with its exact strings, and refused at its field
// when it cannot hold (below the price, above the cap, not a canonical integer, on a Tempo-only paywall).
import { describe, expect, it } from "vitest";
import { type ApiResult, api } from "../support/client.ts";
import { type Actor, actor, createPaywall, expectInvalid, proxyPaywallBody, rawRow } from "../support/resources.ts";

const post = (who: Actor, body: Record<string, unknown>) => api("/v1/paywalls", { key: who.key, method: "POST", body });
const patch = (who: Actor, id: string, body: Record<string, unknown>) =>
  api(`/v1/paywalls/${id}`, { key: who.key, method: "PATCH", body });
const sessionsOf = (res: ApiResult) => (res.body.data as { sessions: unknown }).sessions;

describe("paywall sessions: stored and answered", () => {
  it("is off by default: {enabled: false} on create, get and list", async () => {
    const who = await actor();
    const paywall = await createPaywall(who, proxyPaywallBody());
    expect(paywall.sessions).toEqual({ enabled: false });
    expect(sessionsOf(await api(`/v1/paywalls/${paywall.id}`, { key: who.key }))).toEqual({ enabled: false });
    const list = await api<{ data: { id: string; sessions: unknown }[] }>("/v1/paywalls", { key: who.key });
    expect(list.body.data.find((p) => p.id === paywall.id)?.sessions).toEqual({ enabled: false });
  });

  it("create → get → list answer the exact minimum deposit string, stored as text", async () => {
    const who = await actor();
    // 999999.999999 USDC: one micro-unit under the cap, more digits than a float keeps exactly as a decimal of USDC.
    const created = await createPaywall(who, proxyPaywallBody({ sessions: { enabled: true, minDeposit: "999999999999" } }));
    expect(created.sessions).toEqual({ enabled: true, minDeposit: "999999999999" });
    const got = await api(`/v1/paywalls/${created.id}`, { key: who.key });
    expect(sessionsOf(got)).toEqual({ enabled: true, minDeposit: "999999999999" });
    expect(got.text).toContain('"sessions":{"enabled":true,"minDeposit":"999999999999"}');
    const row = await rawRow("paywalls", created.id);
    expect(row).toMatchObject({ sessions_enabled: 1, sessions_min_deposit: "999999999999" });
    expect(typeof row?.sessions_min_deposit).toBe("string");
  });

  it("without minDeposit the price is the minimum: the response leaves it out", async () => {
    const who = await actor();
    const created = await createPaywall(who, proxyPaywallBody({ sessions: { enabled: true } }));
    expect(created.sessions).toEqual({ enabled: true });
  });

  it("an update without sessions keeps them; one with sessions replaces them whole", async () => {
    const who = await actor();
    const created = await createPaywall(who, proxyPaywallBody({ sessions: { enabled: true, minDeposit: "5000000" } }));
    const renamed = await patch(who, created.id, { name: "Renamed", price: "20000" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(sessionsOf(renamed)).toEqual({ enabled: true, minDeposit: "5000000" });
    expect(sessionsOf(await api(`/v1/paywalls/${created.id}`, { key: who.key }))).toEqual({
      enabled: true,
      minDeposit: "5000000",
    });

    const raised = await patch(who, created.id, { sessions: { enabled: true, minDeposit: "7000000" } });
    expect(sessionsOf(raised)).toEqual({ enabled: true, minDeposit: "7000000" });
    const off = await patch(who, created.id, { sessions: { enabled: false } });
    expect(off.status, off.text).toBe(200);
    expect(sessionsOf(off)).toEqual({ enabled: false });
    expect(await rawRow("paywalls", created.id)).toMatchObject({ sessions_enabled: 0, sessions_min_deposit: null });
  });

  it("turning sessions on moves the paywall's version and the list's ETag", async () => {
    const who = await actor();
    const created = await createPaywall(who, proxyPaywallBody());
    const before = await api("/v1/paywalls", { key: who.key });
    const tag = before.headers.get("etag") as string;
    expect((await api("/v1/paywalls", { key: who.key, headers: { "if-none-match": tag } })).status).toBe(304);
    const on = await patch(who, created.id, { sessions: { enabled: true, minDeposit: "1000000" } });
    expect(on.status, on.text).toBe(200);
    const after = await api("/v1/paywalls", { key: who.key, headers: { "if-none-match": tag } });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(tag);
    const listed = (after.body.data as { id: string; sessions: unknown }[]).find((p) => p.id === created.id);
    expect(listed?.sessions).toEqual({ enabled: true, minDeposit: "1000000" });
  });
});

describe("paywall sessions: refusals at their field", () => {
  it.each([
    [
      "below the price",
      { price: "10000", sessions: { enabled: true, minDeposit: "9999" } },
      "sessions.minDeposit",
      /at least the price \(10000\)/,
    ],
    ["zero", { sessions: { enabled: true, minDeposit: "0" } }, "sessions.minDeposit", /Integer micro-USDC/],
    ["a leading zero", { sessions: { enabled: true, minDeposit: "010000" } }, "sessions.minDeposit", /Integer micro-USDC/],
    ["a decimal", { sessions: { enabled: true, minDeposit: "1.5" } }, "sessions.minDeposit", /send "1500000"/],
    ["a number", { sessions: { enabled: true, minDeposit: 1000000 } }, "sessions.minDeposit", /Must be a string/],
    ["above the cap", { sessions: { enabled: true, minDeposit: "1000000000001" } }, "sessions.minDeposit", /1000000000000/],
    ["no enabled", { sessions: { minDeposit: "1000000" } }, "sessions.enabled", undefined],
    ["an unknown key", { sessions: { enabled: true, deposit: "1" } }, "sessions.deposit", /Unknown field/],
    [
      "Tempo only",
      { networks: ["tempo-testnet"], sessions: { enabled: true } },
      "sessions.enabled",
      /MPP sessions are not offered/,
    ],
  ])("create refuses %s with 400 at its path", async (_, overrides, path, message) => {
    const who = await actor();
    const res = await post(who, proxyPaywallBody(overrides));
    expectInvalid(res, path, message);
  });

  it("a Tempo-only paywall may keep sessions off", async () => {
    const who = await actor();
    const created = await createPaywall(who, proxyPaywallBody({ networks: ["tempo-testnet"], sessions: { enabled: false } }));
    expect(created.sessions).toEqual({ enabled: false });
  });

  it("update checks the paywall as it will be: a price above the stored deposit, networks down to Tempo", async () => {
    const who = await actor();
    const created = await createPaywall(
      who,
      proxyPaywallBody({ networks: ["base-sepolia", "tempo-testnet"], sessions: { enabled: true, minDeposit: "50000" } }),
    );
    expectInvalid(await patch(who, created.id, { price: "60000" }), "price", /at least the price \(60000\)/);
    expectInvalid(await patch(who, created.id, { networks: ["tempo-testnet"] }), "networks", /EVM network/);
    expectInvalid(
      await patch(who, created.id, { sessions: { enabled: true, minDeposit: "9999" } }),
      "sessions.minDeposit",
      /at least the price \(10000\)/,
    );
    // Nothing changed.
    expect(sessionsOf(await api(`/v1/paywalls/${created.id}`, { key: who.key }))).toEqual({
      enabled: true,
      minDeposit: "50000",
    });
    // Both at once pass: the price and a deposit to match.
    const both = await patch(who, created.id, { price: "60000", sessions: { enabled: true, minDeposit: "60000" } });
    expect(both.status, both.text).toBe(200);
    expect(sessionsOf(both)).toEqual({ enabled: true, minDeposit: "60000" });
  });
});
