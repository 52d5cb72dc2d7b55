// The services and paywalls page through the real Worker, signed in with a one-time link: what the tenant sees,
// the enable/disable toggle, and that another tenant's paywall can neither be seen nor switched.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeDemoData } from "../../src/admin/demo-data.ts";
import { ASSET_URL } from "../../src/dashboard/assets.ts";
import { insertPaywallWithinCap } from "../../src/db/paywalls.ts";
import { newId } from "../../src/lib/ids.ts";
import { createPaywallFor } from "../history/support.ts";
import { api } from "../support/client.ts";
import { createApiKey, createTenant, db } from "../support/factories.ts";
import { page, signIn, submit, text } from "./insights-support.ts";

const enabledOf = async (id: string) =>
  (await env.DB.prepare("SELECT enabled FROM paywalls WHERE id = ?").bind(id).first<{ enabled: number }>())?.enabled;

describe("services and paywalls page", () => {
  it("lists the tenant's services and paywalls: price in USDC, networks, state, payment URLs with copy buttons", async () => {
    const tenant = await createTenant();
    const { paywalls } = await writeDemoData(db(), tenant, 5);
    const stranger = await createTenant({ name: "Stranger" });
    const theirs = await createPaywallFor(stranger);
    const cookie = await signIn(tenant);

    const { status, html } = await page(cookie, "/dashboard/services");
    expect(status).toBe(200);
    const seen = text(html);
    expect(seen).toContain("Demo weather API");
    expect(seen).toMatch(
      /Forecast forecast Enabled Disable Edit Delete Price 0\.01 USDC Networks base-sepolia, tempo-testnet Route \/v1\/forecast/,
    );
    expect(seen).toMatch(
      /Historical data history Enabled Disable Edit Delete Price 0\.05 USDC Networks base-sepolia Route \/v1\/history/,
    );
    expect(seen).toMatch(
      /Severe weather alerts alerts Enabled Disable Edit Delete Price 0\.0025 USDC Networks tempo-testnet Route \/v1\/alerts/,
    );
    // Payment URLs: x402 for every paywall of a service, MPP only with a Tempo network; each with a named copy button.
    for (const id of paywalls) expect(html).toContain(`id="url-x402-${id}"`);
    expect(html.match(/id="url-mpp-/g)).toHaveLength(2);
    expect(html).toMatch(
      /<code id="url-x402-[^"]+">https:\/\/pay\.example\.com\/api\/x402\/pay\/svc_[0-9a-f]+\/forecast<\/code>/,
    );
    expect(html).toContain('aria-label="Copy the x402 payment URL of Forecast"');
    expect(html).toContain('aria-label="Copy the MPP payment URL of Severe weather alerts"');
    expect(html).toContain(`src="${ASSET_URL.copy}"`);
    // Buttons named by their action.
    expect(html).toContain('aria-label="Disable paywall Forecast"');
    // Another tenant's service and paywall are not on the page.
    expect(html).not.toContain(theirs.id);
    expect(html).not.toContain(theirs.serviceId as string);
  });

  it("shows paywalls without a service on their own, without payment URLs", async () => {
    const tenant = await createTenant();
    const now = new Date();
    const outcome = await insertPaywallWithinCap(
      db(),
      {
        id: newId("pw"),
        tenantId: tenant.id,
        serviceId: null,
        slug: "loose",
        name: "Loose route",
        targetType: "PROXY",
        targetUrl: "https://upstream.example.com/x",
        price: "1234567",
        currency: "USDC",
        networks: ["base-sepolia"],
        merchantWallet: tenant.walletAddress,
        timeout: 60_000,
        allowedMethods: ["GET"],
        allowedHeaders: [],
        fulfillmentMode: "PROXY",
        enabled: false,
        createdAt: now,
        updatedAt: now,
      },
      100,
    );
    expect("row" in outcome).toBe(true);
    const seen = text((await page(await signIn(tenant), "/dashboard/services")).html);
    expect(seen).toMatch(
      /Paywalls without a service Loose route loose Disabled Enable Edit Delete Price 1\.234567 USDC Networks base-sepolia Upstream URL https:\/\/upstream\.example\.com\/x Payment URLs None: a paywall without a service has no payment URL/,
    );
  });

  it("turns a paywall off and on with a form: the API sees the change, the page says what happened", async () => {
    const { key, tenant } = await createApiKey();
    const paywall = await createPaywallFor(tenant);
    const cookie = await signIn(tenant);

    const off = await submit(cookie, `/dashboard/services/paywalls/${paywall.id}/enabled`, { enabled: "false", page: "1" });
    expect(off.status).toBe(303);
    expect(off.location).toBe(`/dashboard/services?page=1&updated=${paywall.id}#pw-${paywall.id}`);
    expect(await enabledOf(paywall.id)).toBe(0);
    expect((await api(`/v1/paywalls/${paywall.id}`, { key })).body.data.enabled).toBe(false);
    const after = text((await page(cookie, off.location!)).html);
    expect(after).toContain("Paid route is disabled: buyers cannot pay for it until you enable it.");
    expect(after).toMatch(/Paid route p-[0-9a-f]+ Disabled Enable Edit Delete/);

    const on = await submit(cookie, `/dashboard/services/paywalls/${paywall.id}/enabled`, { enabled: "true" });
    expect(on.status).toBe(303);
    expect(await enabledOf(paywall.id)).toBe(1);
    expect(text((await page(cookie, on.location!)).html)).toContain("Paid route is enabled: buyers can pay for it.");
    // Both turns are account events, newest first, naming the paywall.
    const activity = text((await page(cookie, "/dashboard/activity")).html);
    const [enabledAt, disabledAt] = [activity.indexOf("Paywall enabled"), activity.indexOf("Paywall disabled")];
    expect(enabledAt).toBeGreaterThan(-1);
    expect(disabledAt).toBeGreaterThan(enabledAt);
    expect(activity).toContain(paywall.name);
  });

  it("a paywall id of another tenant does nothing and says so", async () => {
    const tenant = await createTenant();
    await createPaywallFor(tenant);
    const theirs = await createPaywallFor(await createTenant());
    const cookie = await signIn(tenant);
    const res = await submit(cookie, `/dashboard/services/paywalls/${theirs.id}/enabled`, { enabled: "false" });
    expect(res.status).toBe(404);
    expect(text(res.html)).toContain("None of your paywalls has this id; nothing was changed.");
    expect(res.html).not.toContain(theirs.id);
    expect(await enabledOf(theirs.id)).toBe(1);
    // Nor does ?updated= with their id reveal anything about it.
    const shown = await page(cookie, `/dashboard/services?updated=${theirs.id}`);
    expect(shown.status).toBe(200);
    expect(shown.html).not.toContain(theirs.id);
    expect(text(shown.html)).not.toContain("is enabled");
  });

  it("refuses a toggle from another site, a bad value, or without a session; nothing changes", async () => {
    const tenant = await createTenant();
    const paywall = await createPaywallFor(tenant);
    const cookie = await signIn(tenant);
    const path = `/dashboard/services/paywalls/${paywall.id}/enabled`;
    expect((await submit(cookie, path, { enabled: "false" }, "https://evil.example")).status).toBe(403);
    const bad = await submit(cookie, path, { enabled: "maybe" });
    expect(bad.status).toBe(400);
    expect(text(bad.html)).toContain("enabled must be true or false; nothing was changed.");
    const anonymous = await submit(undefined, path, { enabled: "false" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toBe("/dashboard/sign-in");
    expect(await enabledOf(paywall.id)).toBe(1);
  });
});

describe("a credential sent over plain http://", () => {
  it("is warned about on the service's card, and only there", async () => {
    const { key, tenant } = await createApiKey();
    const make = async (name: string, baseUrl: string, secret: boolean) => {
      const body = secret
        ? { authMethod: "bearer", authConfig: { bearerToken: "upstream-credential-of-the-test" } }
        : { authMethod: "none" };
      const res = await api("/v1/services", {
        key,
        method: "POST",
        body: { name, baseUrl, networks: ["base"], mode: "mainnet", ...body },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.data.id as string;
    };
    const plain = await make("Plain with a secret", "http://api.example.com", true);
    const tls = await make("TLS with a secret", "https://api.example.com", true);
    const open = await make("Plain without a secret", "http://api.example.com", false);
    const { html } = await page(await signIn(tenant), "/dashboard/services");
    const card = (id: string) => text(html.split(`id="service-${id}"`)[1]!.split("</section>")[0]!);
    expect(card(plain)).toContain(
      "The service sends its bearer credential to a plain http:// baseUrl: anyone on the way can read it. Use https://. (CREDENTIALS_OVER_HTTP)",
    );
    for (const id of [tls, open]) expect(card(id)).not.toContain("CREDENTIALS_OVER_HTTP");
  });
});
