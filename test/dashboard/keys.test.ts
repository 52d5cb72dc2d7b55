// The dashboard's key pages in workerd with real D1: every action through the forms, checked on the API
// (`GET /v1/me` through the real Worker), the audit trail, the 20-key limit, CSRF refusals, the CSP, and one
// tenant's session never reaching another tenant's keys (key ids posted in forms included).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDevSetupKey, DEV_SETUP_KEY_NAME, removeDevSetupKey } from "../../src/admin/commands.ts";
import { pauseKey } from "../../src/core/keys/management.ts";
import { SCOPES } from "../../src/core/keys/scopes.ts";
import { ASSET_URL } from "../../src/dashboard/assets.ts";
import { sha256Hex } from "../../src/lib/ids.ts";
import { registerApiKey } from "../support/canaries.ts";
import { api } from "../support/client.ts";
import { createApiKey, keys } from "../support/factories.ts";
import { DashboardClient, dashboardApp, signedIn, workerApp } from "./dashboard-client.ts";

const app = dashboardApp();

/** Creates a key through the form; returns the raw key shown once (registered as a canary from then on). */
/**
 * Creates a key through the form (Post/Redirect/Get): the POST answers 303 to the page that shows the raw key once
 * (registered as a canary from then on); a refusal answers with the form again.
 */
async function createKeyInForm(client: DashboardClient, fields: Record<string, string | string[]>, ip = "198.51.100.7") {
  const res = await client.post("/dashboard/keys", fields, { ip });
  const location = res.headers.get("location");
  if (res.status !== 303 || !location) return { status: res.status, html: await res.text(), key: undefined, location };
  const shown = await client.get(location, {}, true);
  const html = await shown.text();
  const key = /<code id="new-key">(mpk_[0-9a-f]{64})<\/code>/.exec(html)?.[1];
  if (key) registerApiKey(`dashboard key "${fields.name}"`, key, await sha256Hex(key));
  return { status: res.status, html, key, location };
}

const keyRow = async (id: string) =>
  env.DB.prepare("SELECT id, tenant_id, name, scopes, status, expires_at, allowed_ips FROM api_keys WHERE id = ?")
    .bind(id)
    .first();
const keyIdOf = async (tenantId: string, name: string) =>
  (await env.DB.prepare("SELECT id FROM api_keys WHERE tenant_id = ? AND name = ?").bind(tenantId, name).first<{ id: string }>())!
    .id;
const eventsOf = async (tenantId: string) =>
  (
    await env.DB.prepare("SELECT key_id, action, actor, ip FROM key_events WHERE tenant_id = ? ORDER BY created_at, rowid")
      .bind(tenantId)
      .all()
  ).results;

describe("keys page", () => {
  it("create → shown once → works on the API; pause, resume, edit, revoke, delete each take effect on the next request", async () => {
    const { client, tenant } = await signedIn(app);
    const created = await createKeyInForm(client, {
      name: "CI deploys",
      scopes: ["services:write", "paywalls:read"],
      expiresAt: "2031-01-31T12:00",
      allowIps: "203.0.113.0/24\n2001:db8::1",
    });
    expect(created.status).toBe(303);
    expect(created.location).toMatch(/^\/dashboard\/keys\?shown=[0-9a-f]{32}$/);
    expect(created.key).toMatch(/^mpk_[0-9a-f]{64}$/);
    expect(created.html).toContain("It is shown only this once and cannot be recovered");
    expect(created.html).toContain('data-copy="#new-key"');
    const key = created.key!;
    const id = await keyIdOf(tenant.id, "CI deploys");
    expect(await keyRow(id)).toMatchObject({
      scopes: '["services:write","paywalls:read"]',
      expires_at: Date.parse("2031-01-31T12:00:00Z"),
      allowed_ips: '["203.0.113.0/24","2001:db8::1/128"]',
    });

    const me = (ip = "203.0.113.9") => api("/v1/me", { key, ip });
    expect((await me()).status).toBe(200);
    expect((await me("192.0.2.1")).body.code).toBe("IP_NOT_ALLOWED");

    // Never shown again: the table shows the prefix only.
    const table = await client.text("/dashboard/keys");
    expect(table.html).not.toContain(key);
    expect(table.html).toContain(`${key.slice(0, 12)}…`);
    expect(table.html).toContain("services:write (+ services:read)");
    expect(table.html).toContain("2031-01-31 12:00 UTC");
    expect(table.html).toContain("203.0.113.0/24, 2001:db8::1/128");

    const act = async (action: string) => {
      const res = await client.post(`/dashboard/keys/${id}/${action}`, {}, { ip: "198.51.100.7" });
      return { status: res.status, location: res.headers.get("location"), html: await res.text() };
    };
    expect(await act("pause")).toMatchObject({ status: 303, location: "/dashboard/keys?done=paused" });
    expect((await me()).body.code).toBe("KEY_INACTIVE");
    expect((await client.text("/dashboard/keys")).html).toContain('<span class="status paused">paused</span>');
    expect((await act("resume")).status).toBe(303);
    expect((await me()).status).toBe(200);

    const edit = await client.text(`/dashboard/keys/${id}/edit`);
    expect(edit.html).toContain('value="CI deploys"');
    const saved = await client.post(`/dashboard/keys/${id}/edit`, {
      name: "CI (read only)",
      scopes: "services:read",
      expiresAt: "",
      allowIps: "",
    });
    expect(saved.status).toBe(303);
    expect((await me("192.0.2.1")).status).toBe(200); // allowlist removed
    expect((await api("/v1/paywalls", { key })).body.code).toBe("INSUFFICIENT_SCOPE");
    expect(await keyRow(id)).toMatchObject({ name: "CI (read only)", scopes: '["services:read"]', expires_at: null });

    expect((await act("revoke")).status).toBe(303);
    expect((await me()).body.code).toBe("KEY_REVOKED");
    const again = await act("revoke");
    expect(again.status).toBe(409);
    expect(again.html).toContain("ALREADY_REVOKED");
    expect((await act("resume")).status).toBe(409);

    expect((await act("delete")).status).toBe(303);
    expect((await me()).body.code).toBe("INVALID_API_KEY");
    expect(await keyRow(id)).toBeNull();

    // The audit trail: one event per change, by the dashboard, from the client's address; none for refusals.
    expect(await eventsOf(tenant.id)).toEqual(
      ["created", "paused", "resumed", "edited", "revoked", "deleted"].map((action) => ({
        key_id: id,
        action,
        actor: "dashboard",
        ip: action === "edited" ? null : "198.51.100.7",
      })),
    );
    const activity = await client.text("/dashboard/activity");
    expect(activity.html).toContain("CI (read only)");
    for (const action of ["created", "paused", "resumed", "edited", "revoked", "deleted"])
      expect(activity.html).toContain(`>Key ${action}</td>`);
    expect(activity.html).toContain("198.51.100.7");
  });

  it("refuses bad input with the rules of the CLI, and keeps what was typed", async () => {
    const { client, tenant } = await signedIn(app);
    const cases: [Record<string, string | string[]>, string][] = [
      [{ name: "x", scopes: [], allowIps: "" }, "At least one scope is required"],
      [{ name: "x", scopes: ["admin:all"], allowIps: "" }, "Unknown scope(s): admin:all"],
      [{ name: "", scopes: ["events:read"], allowIps: "" }, "Name: Must be 1-100 characters"],
      [
        { name: "x", scopes: ["events:read"], allowIps: "10.0.0.0/33" },
        "IP allowlist: Not a valid prefix length in 10.0.0.0/33: a whole number from 0 to 32",
      ],
      [{ name: "x", scopes: ["events:read"], expiresAt: "2001-01-01T00:00" }, "Expires at: Must be in the future"],
      [{ name: "x", scopes: ["events:read"], expiresAt: "soon" }, "Expires at: Must be an ISO 8601 date-time"],
    ];
    for (const [fields, message] of cases) {
      const res = await client.post("/dashboard/keys", fields);
      expect(res.status, message).toBe(400);
      const html = await res.text();
      expect(html, message).toContain(message.replaceAll("'", "&#39;"));
    }
    expect(await eventsOf(tenant.id)).toEqual([]);
  });

  it("the 21st active key is refused with KEY_LIMIT_REACHED; paused keys count", async () => {
    const { client, tenant } = await signedIn(app);
    for (let i = 0; i < 20; i++) {
      const { status } = await createKeyInForm(client, { name: `k${i}`, scopes: "events:read" });
      expect(status).toBe(303);
    }
    await client.post(`/dashboard/keys/${await keyIdOf(tenant.id, "k0")}/pause`);
    const refused = await createKeyInForm(client, { name: "k20", scopes: "events:read" });
    expect(refused.status).toBe(409);
    expect(refused.key).toBeUndefined();
    expect(refused.html).toContain(
      "You already hold 20 active keys (paused keys count): revoke or delete one first (KEY_LIMIT_REACHED).",
    );
    await client.post(`/dashboard/keys/${await keyIdOf(tenant.id, "k1")}/revoke`);
    expect((await createKeyInForm(client, { name: "k20", scopes: "events:read" })).status).toBe(303);
  });

  it("an operator's CLI change is in the tenant's activity as the operator's", async () => {
    const { client, tenant } = await signedIn(app);
    const { row } = await createApiKey({ tenant, name: "operator-made" });
    await pauseKey(keys(), { id: row.id });
    const html = (await client.text("/dashboard/activity")).html;
    expect(html).toContain("Operator (CLI)");
    expect(await eventsOf(tenant.id)).toEqual([{ key_id: row.id, action: "paused", actor: "operator-cli", ip: null }]);
  });
});

describe("the key npm run dev -- --payments sets up its demo with", () => {
  it("is in the tenant's activity as made and deleted by npm run dev, never as the operator's", async () => {
    const { client, tenant } = await signedIn(app);
    const left = await createDevSetupKey(keys(), tenant.id); // an interrupted run left this one
    const setup = await createDevSetupKey(keys(), tenant.id);
    for (const k of [left, setup]) registerApiKey("dev setup key", k.key, await sha256Hex(k.key));
    await removeDevSetupKey(keys(), setup.id);
    const html = (await client.text("/dashboard/activity")).html;
    const rows = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, " ").replace(/\s+/g, " "));
    const keyRows = rows.filter((row) => row.includes("Key "));
    expect(keyRows).toHaveLength(4);
    for (const row of keyRows) {
      expect(row).toContain(DEV_SETUP_KEY_NAME);
      expect(row).toContain("npm run dev (this machine)");
      expect(row).not.toContain("Operator (CLI)");
    }
    expect(await eventsOf(tenant.id)).toEqual([
      { key_id: left.id, action: "created", actor: "dev-runner", ip: null },
      { key_id: left.id, action: "deleted", actor: "dev-runner", ip: null },
      { key_id: setup.id, action: "created", actor: "dev-runner", ip: null },
      { key_id: setup.id, action: "deleted", actor: "dev-runner", ip: null },
    ]);
    // Nothing of it is left among the tenant's keys.
    expect((await client.text("/dashboard/keys")).html).not.toContain(DEV_SETUP_KEY_NAME);
  });
});

describe("one tenant's session never reaches another tenant's keys", () => {
  it("pause, resume, revoke, delete, edit of another tenant's key id are refused (403) and change nothing", async () => {
    const victim = await createApiKey({ name: "victim key" });
    const { client, tenant } = await signedIn(app);
    const before = await keyRow(victim.row.id);
    for (const action of ["pause", "resume", "revoke", "delete"]) {
      const res = await client.post(`/dashboard/keys/${victim.row.id}/${action}`);
      expect(res.status, action).toBe(403);
      expect(await res.text()).toContain("belongs to another tenant");
    }
    expect((await client.text(`/dashboard/keys/${victim.row.id}/edit`)).status).toBe(403);
    const edit = await client.post(`/dashboard/keys/${victim.row.id}/edit`, { name: "pwned", scopes: [...SCOPES], allowIps: "" });
    expect(edit.status).toBe(403);
    expect(await keyRow(victim.row.id)).toEqual(before);
    expect((await api("/v1/me", { key: victim.key })).status).toBe(200);
    expect(await eventsOf(victim.tenant.id)).toEqual([]);
    expect(await eventsOf(tenant.id)).toEqual([]);
    // Unknown ids are 404.
    expect((await client.post("/dashboard/keys/key_doesnotexist/pause")).status).toBe(404);
  });

  it("pages list only the signed-in tenant's keys and events", async () => {
    const a = await signedIn(app);
    const b = await signedIn(app);
    await createKeyInForm(a.client, { name: "alpha-only-key", scopes: "events:read" });
    const bKeys = (await b.client.text("/dashboard/keys")).html;
    const bActivity = (await b.client.text("/dashboard/activity")).html;
    expect(bKeys).not.toContain("alpha-only-key");
    expect(bActivity).not.toContain("alpha-only-key");
    expect(bKeys).toContain("No keys yet");
    expect((await a.client.text("/dashboard/keys")).html).toContain("alpha-only-key");
  });
});

describe("browser protections", () => {
  it("refuses a cross-site form post (CSRF): another Origin, or Sec-Fetch-Site cross-site without Origin; nothing changes", async () => {
    const { client, tenant } = await signedIn(app);
    const fields = { name: "csrf", scopes: "events:read" };
    const cross = await client.post("/dashboard/keys", fields, { origin: "https://evil.test" });
    expect(cross.status).toBe(403);
    expect(await cross.text()).toContain("cross-site request refused");
    const noOrigin = await client.post("/dashboard/keys", fields, { origin: null, headers: { "sec-fetch-site": "cross-site" } });
    expect(noOrigin.status).toBe(403);
    const signOut = await client.post("/dashboard/sign-out", {}, { origin: "https://evil.test" });
    expect(signOut.status).toBe(403);
    // Not a form: refused whatever its origin, so no content type bypasses the check.
    const json = await client.post(
      "/dashboard/keys",
      {},
      { origin: "https://evil.test", headers: { "content-type": "application/json" } },
    );
    expect(json.status).toBe(415);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?").bind(tenant.id).first()).toEqual({
      n: 0,
    });
    expect((await client.text("/dashboard/keys")).status).toBe(200); // still signed in
    // Same origin (or Sec-Fetch-Site same-origin) is accepted.
    const ok = await client.post("/dashboard/keys", fields, {
      origin: null,
      headers: { "sec-fetch-site": "same-origin" },
    });
    expect(ok.status).toBe(303);
    const okKey = /mpk_[0-9a-f]{64}/.exec(await (await client.get(ok.headers.get("location")!, {}, true)).text())?.[0];
    if (okKey) registerApiKey("csrf same-origin key", okKey, await sha256Hex(okKey));
  });

  it("pages carry a strict CSP (scripts only from self or the response's nonce, no framing) and are not cached", async () => {
    const res = await new DashboardClient(workerApp).get("/dashboard/sign-in");
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toMatch(/script-src 'self' 'nonce-[0-9a-f]{32}'(;|$)/);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc="\/dashboard\/assets\/)/); // no inline script
    expect(html).not.toMatch(/\son[a-z]+=/); // no inline handlers
  });

  it("is served by the Worker under /dashboard, outside /v1 auth and outside the OpenAPI document", async () => {
    const client = new DashboardClient(workerApp);
    const res = await client.get("/dashboard/keys");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sign-in");
    const doc = await api("/openapi.json");
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith("/dashboard"))).toEqual([]);
    // An unknown dashboard page: the sign-in page without a session, the dashboard's own 404 page with one.
    expect((await client.get("/dashboard/no-such-page")).headers.get("location")).toBe("/dashboard/sign-in");
    const { client: signedInClient } = await signedIn(workerApp);
    const missing = await signedInClient.get("/dashboard/no-such-page");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await missing.text()).toContain("There is no such dashboard page.");
    const asset = await client.get(ASSET_URL.siwe);
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
  });
});
