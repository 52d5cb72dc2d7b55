// Safe forms in workerd with real D1: Post/Redirect/Get (a new key reaches the next page once, through an encrypted
// flash bound to the session), confirmation steps that change nothing, errors next to their fields, rolling a key,
// permission presets, wallet forms without JavaScript, and content-hashed assets.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ASSET_URL, ASSETS, contentHash } from "../../src/dashboard/assets.ts";
import { sha256Hex } from "../../src/lib/ids.ts";
import { registerApiKey } from "../support/canaries.ts";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import { DashboardClient, dashboardApp, signedIn, workerApp } from "./dashboard-client.ts";

const app = dashboardApp();

const keysOf = async (tenantId: string) =>
  (
    await env.DB.prepare("SELECT id, name, status, expires_at FROM api_keys WHERE tenant_id = ? ORDER BY created_at")
      .bind(tenantId)
      .all<{
        id: string;
        name: string;
        status: string;
        expires_at: number | null;
      }>()
  ).results;

/** The raw key a page shows, registered as a canary from then on. */
async function shownKey(html: string, label: string) {
  const key = /<code id="new-key">(mpk_[0-9a-f]{64})<\/code>/.exec(html)?.[1];
  if (key) registerApiKey(label, key, await sha256Hex(key));
  return key;
}

describe("Post/Redirect/Get", () => {
  it("a created key is shown once on the page the POST redirects to: a reload shows it no more and creates nothing", async () => {
    const { client, tenant } = await signedIn(app);
    const res = await client.post("/dashboard/keys", { name: "once", preset: "read-only" });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/dashboard\/keys\?shown=[0-9a-f]{32}$/);
    // The POST's own answer holds no key.
    expect(await res.text()).not.toContain("mpk_");
    const first = await (await client.get(location, {}, true)).text();
    const key = await shownKey(first, "PRG key");
    expect(key).toMatch(/^mpk_/);
    expect((await api("/v1/paywalls", { key: key! })).status).toBe(200);
    expect((await api("/v1/services", { key: key!, method: "POST", body: {} })).status).toBe(403);

    const again = await client.text(location);
    expect(again.status).toBe(200);
    expect(again.html).not.toContain(key);
    expect(again.html).not.toContain('id="new-key"');
    expect(again.html).toContain("nothing was created by reloading");
    expect(await keysOf(tenant.id)).toHaveLength(1);
    // The flash is stored encrypted (never the raw key), and is gone once read.
    const flashes = await env.DB.prepare("SELECT body FROM dashboard_flashes").all<{ body: string }>();
    expect(JSON.stringify(flashes.results)).not.toContain(key);
  });

  it("another session cannot read a flash, even with its id", async () => {
    const a = await signedIn(app);
    const res = await a.client.post("/dashboard/keys", { name: "mine", preset: "full" });
    const location = res.headers.get("location")!;
    const b = await signedIn(app);
    const stolen = await b.client.text(location);
    expect(stolen.html).not.toContain('id="new-key"');
    // Still there for its own session.
    expect(await shownKey(await (await a.client.get(location, {}, true)).text(), "flash owner's key")).toMatch(/^mpk_/);
  });

  it("the full-access preset grants every scope; custom takes the boxes", async () => {
    const { client, tenant } = await signedIn(app);
    await client.post("/dashboard/keys", { name: "full", preset: "full", scopes: "events:read" });
    await client.post("/dashboard/keys", { name: "custom", preset: "custom", scopes: ["events:read", "paywalls:read"] });
    const scopes = (
      await env.DB.prepare("SELECT name, scopes FROM api_keys WHERE tenant_id = ? ORDER BY name").bind(tenant.id).all()
    ).results;
    expect(scopes).toEqual([
      { name: "custom", scopes: '["events:read","paywalls:read"]' },
      {
        name: "full",
        scopes:
          '["services:read","services:write","paywalls:read","paywalls:write","transactions:read","events:read","webhooks:read","webhooks:write"]',
      },
    ]);
  });
});

describe("confirmation steps", () => {
  it("opening revoke or delete changes nothing; the page's button names the action and the key", async () => {
    const { client, tenant } = await signedIn(app);
    const { key, row } = await createApiKey({ tenant, name: "ci-deploy" });
    for (const action of ["revoke", "delete"]) {
      const page = await client.text(`/dashboard/keys/${row.id}/${action}`);
      expect(page.status).toBe(200);
      const verb = action === "revoke" ? "Revoke" : "Delete";
      expect(page.html).toContain(`<button type="submit" class="danger">${verb} key ci-deploy</button>`);
      expect(page.html).toContain(`action="/dashboard/keys/${row.id}/${action}"`);
      expect(page.html).toContain("cannot be undone");
    }
    expect((await api("/v1/me", { key })).status).toBe(200);
    expect(await keysOf(tenant.id)).toMatchObject([{ status: "active" }]);
    // The keys table links to those pages; only pause and resume are one-step forms.
    const table = await client.text("/dashboard/keys");
    expect(table.html).toContain(`href="/dashboard/keys/${row.id}/revoke"`);
    expect(table.html).not.toContain(`action="/dashboard/keys/${row.id}/revoke"`);
    expect(table.html).not.toContain(`action="/dashboard/keys/${row.id}/delete"`);
  });

  it("another tenant's key has no confirmation page either (403)", async () => {
    const victim = await createApiKey();
    const { client } = await signedIn(app);
    expect((await client.text(`/dashboard/keys/${victim.row.id}/revoke`)).status).toBe(403);
    expect((await client.text(`/dashboard/keys/${victim.row.id}/roll`)).status).toBe(403);
  });
});

describe("errors people understand", () => {
  it("each error sits next to its field, starts with the field's label, and the first field takes focus", async () => {
    const { client } = await signedIn(app);
    const res = await client.post("/dashboard/keys", {
      name: "",
      preset: "custom",
      allowIps: "10.0.0.300\n192.168.1.1/40\n10.0.0.1\nfe80::1%eth0",
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    // Every bad entry is named, each by the field's label; the good one is not.
    const ipErrors = /<p id="new-ips-error" class="field-error">(.*?)<\/p>/.exec(html)?.[1] ?? "";
    expect(ipErrors.match(/IP allowlist: /g)).toHaveLength(3);
    for (const bad of ["10.0.0.300", "192.168.1.1/40", "fe80::1%eth0"]) expect(ipErrors).toContain(bad);
    expect(ipErrors).not.toMatch(/10\.0\.0\.1[^/]/);
    expect(html).toContain('<p id="new-name-error" class="field-error"><span>Name: Must be 1-100 characters</span></p>');
    expect(html).toMatch(/<input aria-invalid="true" aria-describedby="new-name-error" autofocus="" id="new-name"/);
    expect(html).toMatch(/<textarea aria-invalid="true" aria-describedby="new-ips-hint new-ips-error" id="new-ips"/);
    // Only the first field with an error takes focus; internal field names appear nowhere.
    expect(html.match(/autofocus=""/g)).toHaveLength(1);
    expect(html).not.toMatch(/allowIps:|expiresAt:/);
    // The summary links every error to its field; what was typed is kept.
    expect(html).toContain('<a href="#new-ips">IP allowlist: ');
    expect(html).toContain("fe80::1%eth0</textarea>");
  });
});

describe("rolling a key", () => {
  it("a new key now; the old one keeps working for the grace period, then expires", async () => {
    const { client, tenant } = await signedIn(app);
    const { key: old, row } = await createApiKey({
      tenant,
      name: "rolled",
      scopes: ["events:read"],
      allowIps: ["203.0.113.0/24"],
    });
    const form = await client.text(`/dashboard/keys/${row.id}/roll`);
    expect(form.html).toContain("Roll key rolled</button>");
    const res = await client.post(`/dashboard/keys/${row.id}/roll`, { graceSeconds: "3600" }, { ip: "198.51.100.9" });
    expect(res.status).toBe(303);
    const html = await (await client.get(res.headers.get("location")!, {}, true)).text();
    const fresh = await shownKey(html, "rolled key");
    expect(html).toContain("the old key keeps working until");
    const keys = await keysOf(tenant.id);
    expect(keys).toHaveLength(2);
    const [before, after] = keys;
    expect(before).toMatchObject({ id: row.id, status: "active" });
    expect(before!.expires_at! - Date.now()).toBeGreaterThan(3500_000);
    expect(before!.expires_at! - Date.now()).toBeLessThanOrEqual(3600_000);
    expect(after).toMatchObject({ name: "rolled", status: "active", expires_at: null });
    // Both work now, from the allowlist; the new key has the old one's permissions.
    expect((await api("/v1/events", { key: old, ip: "203.0.113.5" })).status).toBe(200);
    expect((await api("/v1/events", { key: fresh!, ip: "203.0.113.5" })).status).toBe(200);
    expect((await api("/v1/events", { key: fresh!, ip: "192.0.2.1" })).body.code).toBe("IP_NOT_ALLOWED");
    expect((await api("/v1/paywalls", { key: fresh!, ip: "203.0.113.5" })).body.code).toBe("INSUFFICIENT_SCOPE");
    const events = (
      await env.DB.prepare("SELECT key_id, action FROM key_events WHERE tenant_id = ? ORDER BY created_at, rowid")
        .bind(tenant.id)
        .all()
    ).results;
    expect(events).toEqual([
      { key_id: after!.id, action: "created" },
      { key_id: row.id, action: "rolled" },
    ]);
  });

  it("with no grace period the old key stops at once; a revoked key cannot be rolled", async () => {
    const { client, tenant } = await signedIn(app);
    const { key: old, row } = await createApiKey({ tenant, name: "now" });
    const res = await client.post(`/dashboard/keys/${row.id}/roll`, { graceSeconds: "0" });
    await shownKey(await (await client.get(res.headers.get("location")!, {}, true)).text(), "rolled at once");
    expect((await api("/v1/me", { key: old })).body.code).toBe("KEY_REVOKED");
    const again = await client.post(`/dashboard/keys/${row.id}/roll`, { graceSeconds: "0" });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("ALREADY_REVOKED");
    expect(await keysOf(tenant.id)).toHaveLength(2);
  });
});

describe("without JavaScript", () => {
  it("a wallet form posted without the script gets a page in the dashboard's frame, never JSON", async () => {
    const client = new DashboardClient(app);
    for (const path of ["/dashboard/sign-in/siwe", "/dashboard/sign-in/siwe/message"]) {
      const res = await client.post(path, {}, { noScript: true });
      expect(res.status, path).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain("A wallet signature needs JavaScript");
      expect(html).toContain('class="skip-link"');
    }
    const { client: signed } = await signedIn(app);
    const res = await signed.post("/dashboard/profile/wallet", { which: "primary" }, { noScript: true });
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const profile = await signed.text("/dashboard/profile");
    expect(profile.html).toMatch(/<noscript>.*Signing with a wallet needs JavaScript/s);
  });

  it("copy buttons are hidden until their script shows them", async () => {
    const { client } = await signedIn(app);
    const res = await client.post("/dashboard/keys", { name: "copyable", preset: "full" });
    const html = await (await client.get(res.headers.get("location")!, {}, true)).text();
    await shownKey(html, "copyable key");
    expect(html).toMatch(/<button type="button" data-copy="#new-key" data-copy-what="the new key" hidden="">Copy key<\/button>/);
    expect(html).toContain('<p id="copy-status" class="sr-only" role="status" aria-live="polite"></p>');
  });
});

describe("static assets", () => {
  it("are served under content-hashed names, cached for good; pages stay no-store", async () => {
    const client = new DashboardClient(workerApp);
    for (const url of Object.values(ASSET_URL)) {
      const name = url.split("/").pop()!;
      const [base, hash] = name.split(".");
      expect(hash).toBe(contentHash(ASSETS[name]!.body));
      expect(base).toMatch(/^(dashboard|copy|siwe|auth-fields|paywall-fields)$/);
      const res = await client.get(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(await res.text()).toBe(ASSETS[name]!.body);
    }
    // An old or unknown name is a 404, never cached.
    const stale = await client.get("/dashboard/assets/dashboard.00000000.css");
    expect(stale.status).toBe(404);
    expect(stale.headers.get("cache-control")).toBe("no-store");
    const page = await client.get("/dashboard/sign-in");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).toContain(`href="${ASSET_URL.css}"`);
  });

  it("the focus ring has at least 3:1 contrast against every background it appears on", () => {
    const css = ASSETS[ASSET_URL.css.split("/").pop()!]!.body;
    const focus = /--focus:(#[0-9a-f]{6})/.exec(css)?.[1];
    expect(css).toContain(":focus-visible { outline:3px solid var(--focus);");
    const luminance = (hex: string) => {
      const [r, g, b] = [1, 3, 5].map((i) => {
        const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const contrast = (a: string, b: string) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (hi! + 0.05) / (lo! + 0.05);
    };
    // White cards, the grey page, the warning notice, the code background.
    for (const background of ["#ffffff", "#f6f7f9", "#fff8e6", "#f0f2f5"]) {
      expect(contrast(focus!, background), background).toBeGreaterThanOrEqual(3);
    }
  });
});
