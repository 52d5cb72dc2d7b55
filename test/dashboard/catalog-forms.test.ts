// Services and paywalls through the dashboard's forms in workerd with real D1: what the forms write is what the API
// returns (the same rules: src/core/catalog), prices typed in USDC become exact micro-units, secrets are write-only,
// an edit made elsewhere meanwhile is never overwritten (If-Match), refusals are named by their fields' labels, and
// every change is in the account's activity.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import { dashboardApp, signedIn } from "./dashboard-client.ts";

const app = dashboardApp();

const SERVICE = {
  name: "Weather",
  baseUrl: "https://weather.example.com/v2",
  mode: "testnet",
  networks: ["base-sepolia", "tempo-testnet"],
  authMethod: "bearer",
  "auth.bearerToken": "upstream-secret-abc",
  categories: "weather, maps",
  publicRoutes: "/health\n/docs",
  description: "",
};

async function setUp() {
  const session = await signedIn(app);
  const { key } = await createApiKey({ tenant: session.tenant });
  return { ...session, key };
}

const serviceIdOf = (location: string | null) => new URL(`https://x${location}`).searchParams.get("id")!;

describe("services through the forms", () => {
  it("a created service is what the API returns; the secret is stored sealed and never shown again", async () => {
    const { client, key } = await setUp();
    const res = await client.post("/dashboard/services", SERVICE);
    expect(res.status).toBe(303);
    const id = serviceIdOf(res.headers.get("location"));
    const got = await api(`/v1/services/${id}`, { key });
    expect(got.body.data).toMatchObject({
      name: "Weather",
      baseUrl: "https://weather.example.com/v2",
      mode: "testnet",
      networks: ["base-sepolia", "tempo-testnet"],
      authMethod: "bearer",
      authConfig: { bearerToken: "***" },
      categories: ["weather", "maps"],
      publicRoutes: ["/health", "/docs"],
      description: null,
    });
    const stored = await env.DB.prepare("SELECT auth_config FROM services WHERE id = ?")
      .bind(id)
      .first<{ auth_config: string }>();
    expect(stored!.auth_config).not.toContain("upstream-secret-abc");
    const edit = await client.text(`/dashboard/services/${id}/edit`);
    expect(edit.html).not.toContain("upstream-secret-abc");
    expect(edit.html).toContain('<input type="hidden" name="version" value="1"/>');
    expect(edit.html).toContain("Stored; leave empty to keep it.");

    // Saving with the secret left empty keeps it; the version is the If-Match.
    const saved = await client.post(`/dashboard/services/${id}/edit`, {
      ...SERVICE,
      name: "Weather 2",
      "auth.bearerToken": "",
      version: "1",
    });
    expect(saved.status).toBe(303);
    expect((await api(`/v1/services/${id}`, { key })).body.data).toMatchObject({
      name: "Weather 2",
      authConfig: { bearerToken: "***" },
    });
    const after = await env.DB.prepare("SELECT auth_config, version FROM services WHERE id = ?").bind(id).first<{
      auth_config: string;
      version: number;
    }>();
    expect(after!.auth_config).toBe(stored!.auth_config);
    expect(after!.version).toBe(2);
    // The activity names what changed, not every field the form sent.
    const change = await env.DB.prepare(
      "SELECT detail FROM account_events WHERE action = 'service-updated' AND subject = 'Weather 2'",
    ).first();
    expect(change).toEqual({ detail: "name" });
  });

  it("an edit made elsewhere since the form was opened is refused (412 underneath) and nothing is overwritten", async () => {
    const { client, key } = await setUp();
    const id = serviceIdOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    expect((await api(`/v1/services/${id}`, { key, method: "PATCH", body: { name: "Changed by the API" } })).status).toBe(200);
    const stale = await client.post(`/dashboard/services/${id}/edit`, { ...SERVICE, name: "From the stale form", version: "1" });
    expect(stale.status).toBe(412);
    expect(await stale.text()).toContain("was changed elsewhere since you opened this form");
    expect((await api(`/v1/services/${id}`, { key })).body.data.name).toBe("Changed by the API");
    // The refused write recorded nothing: only the API's change is in the activity.
    const changes = await env.DB.prepare(
      "SELECT actor FROM account_events WHERE action = 'service-updated' AND tenant_id = (SELECT tenant_id FROM services WHERE id = ?)",
    )
      .bind(id)
      .all<{ actor: string }>();
    expect(changes.results.map((r) => r.actor)).toEqual(["api"]);
  });

  it("refusals are the API's rules, named by the fields' labels: every bad network, an SSRF target, a missing secret", async () => {
    const { client } = await setUp();
    const bad = await client.post("/dashboard/services", {
      ...SERVICE,
      name: "",
      networks: ["base", "hyperevm", "base-sepolia"],
      "auth.bearerToken": "",
    });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(html).toContain("Name: Required");
    expect(html).toContain("Networks: &quot;base&quot; is not a testnet network");
    expect(html).toContain("Networks: &quot;hyperevm&quot; is not a testnet network");
    expect(html).not.toMatch(/networks\.\d|authConfig\./);
    const ssrf = await client.post("/dashboard/services", { ...SERVICE, baseUrl: "http://127.0.0.1:8080/" });
    expect(ssrf.status).toBe(400);
    const ssrfHtml = await ssrf.text();
    expect(ssrfHtml).toMatch(/<p id="svc-baseUrl-error" class="field-error"><span>Base URL: /);
    const secret = await client.post("/dashboard/services", { ...SERVICE, "auth.bearerToken": "" });
    expect(await secret.text()).toMatch(
      /<p id="svc-auth-bearerToken-error" class="field-error"><span>Bearer token: Required for authMethod/,
    );
    // What was typed stays, except the secret.
    expect(ssrfHtml).toContain('value="http://127.0.0.1:8080/"');
    expect(ssrfHtml).not.toContain("upstream-secret-abc");
  });

  it("delete asks first; the confirmed delete takes the service and its paywalls", async () => {
    const { client, key } = await setUp();
    const id = serviceIdOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    const confirm = await client.text(`/dashboard/services/${id}/delete`);
    expect(confirm.html).toContain('<button type="submit" class="danger">Delete service Weather</button>');
    expect((await api(`/v1/services/${id}`, { key })).status).toBe(200);
    expect((await client.post(`/dashboard/services/${id}/delete`, { version: "1" })).status).toBe(303);
    expect((await api(`/v1/services/${id}`, { key })).status).toBe(404);
  });
});

describe("paywalls through the forms", () => {
  const PAYWALL = {
    slug: "forecast",
    name: "Forecast",
    price: "0.01",
    targetType: "ROUTE",
    targetRoute: "/v1/forecast",
    networks: "base-sepolia",
    allowedMethods: ["GET", "POST"],
    fulfillmentMode: "PROXY",
    timeout: "45",
    enabled: "true",
  };

  it("price 0.01 is stored as 10000 micro-USDC, digit by digit; the API returns what the form made", async () => {
    const { client, key } = await setUp();
    const serviceId = serviceIdOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    const res = await client.post("/dashboard/paywalls", { ...PAYWALL, serviceId });
    expect(res.status).toBe(303);
    const id = serviceIdOf(res.headers.get("location"));
    expect((await api(`/v1/paywalls/${id}`, { key })).body.data).toMatchObject({
      slug: "forecast",
      price: "10000",
      targetType: "ROUTE",
      targetRoute: "/v1/forecast",
      targetUrl: null,
      serviceId,
      networks: ["base-sepolia"],
      allowedMethods: ["GET", "POST"],
      timeout: 45_000,
      enabled: true,
    });
    // Prices past 2^53 micro-units stay exact.
    const edit = await client.post(`/dashboard/paywalls/${id}/edit`, {
      ...PAYWALL,
      serviceId,
      price: "999,999,999.999999",
      version: "1",
    });
    expect(edit.status).toBe(303);
    expect((await api(`/v1/paywalls/${id}`, { key })).body.data.price).toBe("999999999999999");
    expect((await client.text(`/dashboard/paywalls/${id}/edit`)).html).toContain('value="999,999,999.999999"');
  });

  it("refusals by label: a price with 7 decimals or of 0, a taken slug, a network outside the service's mode", async () => {
    const { client } = await setUp();
    const serviceId = serviceIdOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    for (const price of ["0.0000001", "0", "1e3", "-1"]) {
      const res = await client.post("/dashboard/paywalls", { ...PAYWALL, serviceId, price });
      expect(res.status, price).toBe(400);
      expect(await res.text(), price).toContain("Price (USDC): Must be a decimal amount from 0.000001 to 1,000,000,000");
    }
    expect((await client.post("/dashboard/paywalls", { ...PAYWALL, serviceId })).status).toBe(303);
    const taken = await client.post("/dashboard/paywalls", { ...PAYWALL, serviceId });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain(
      '<p id="pw-slug-error" class="field-error"><span>Slug: A paywall with this slug already exists',
    );
    const mainnet = await client.post("/dashboard/paywalls", { ...PAYWALL, slug: "other", serviceId, networks: "base" });
    expect(mainnet.status).toBe(400);
    expect(await mainnet.text()).toContain("Networks: &quot;base&quot; is not a testnet network, the service&#39;s mode");
  });

  it("disable asks first; enable is one step; another tenant's paywall cannot be edited, deleted or disabled", async () => {
    const { client, key } = await setUp();
    const serviceId = serviceIdOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    const id = serviceIdOf((await client.post("/dashboard/paywalls", { ...PAYWALL, serviceId })).headers.get("location"));
    const confirm = await client.text(`/dashboard/paywalls/${id}/disable`);
    expect(confirm.html).toContain(">Disable paywall Forecast</button>");
    expect((await api(`/v1/paywalls/${id}`, { key })).body.data.enabled).toBe(true);
    const list = await client.text("/dashboard/services");
    expect(list.html).toContain(`href="/dashboard/paywalls/${id}/disable?page=1"`);

    const stranger = await signedIn(app);
    for (const path of [
      `/dashboard/paywalls/${id}/edit`,
      `/dashboard/paywalls/${id}/delete`,
      `/dashboard/paywalls/${id}/disable`,
    ]) {
      expect((await stranger.client.text(path)).status, path).toBe(403);
    }
    expect((await stranger.client.post(`/dashboard/paywalls/${id}/delete`, { version: "1" })).status).toBe(403);
    expect((await stranger.client.post(`/dashboard/services/${serviceId}/edit`, { ...SERVICE, version: "1" })).status).toBe(403);
    expect((await api(`/v1/paywalls/${id}`, { key })).status).toBe(200);
  });
});

describe("activity", () => {
  it("lists sign-ins with the browser, profile, service and paywall changes (dashboard and API), and key events", async () => {
    const { client, key, tenant } = await setUp();
    const serviceId = serviceIdOf(
      (await client.post("/dashboard/services", SERVICE, { ip: "198.51.100.20" })).headers.get("location"),
    );
    await api(`/v1/services/${serviceId}`, { key, method: "PATCH", body: { name: "Renamed by API" } });
    await client.post("/dashboard/profile", { name: "New name", email: `new-${tenant.id}@example.com` });
    await client.post("/dashboard/keys", { name: "k", preset: "full" });
    const rows = (
      await env.DB.prepare(
        "SELECT action, subject, detail, actor FROM account_events WHERE tenant_id = ? ORDER BY created_at, rowid",
      )
        .bind(tenant.id)
        .all()
    ).results;
    expect(rows).toEqual([
      { action: "signed-in", subject: "one-time link", detail: "Unknown browser", actor: "dashboard" },
      { action: "service-created", subject: "Weather", detail: null, actor: "dashboard" },
      { action: "service-updated", subject: "Renamed by API", detail: "name", actor: "api" },
      { action: "profile-changed", subject: null, detail: "name, e-mail", actor: "dashboard" },
    ]);
    const page = await client.text("/dashboard/activity");
    for (const text of [
      "Signed in",
      "Service created",
      "Service changed",
      "Profile changed",
      "Key created",
      ">API<",
      "198.51.100.20",
    ]) {
      expect(page.html).toContain(text);
    }
  });

  it("a create refused by the beta cap (inside the write's own batch) records nothing", async () => {
    const capped = dashboardApp({ vars: { MAX_SERVICES_PER_TENANT: "1" } });
    const { client, tenant } = await signedIn(capped);
    expect((await client.post("/dashboard/services", SERVICE)).status).toBe(303);
    const over = await client.post("/dashboard/services", { ...SERVICE, name: "One too many" });
    expect(over.status).toBe(403);
    expect(await over.text()).toContain("at most 1 services");
    const created = await env.DB.prepare("SELECT subject FROM account_events WHERE tenant_id = ? AND action = 'service-created'")
      .bind(tenant.id)
      .all();
    expect(created.results).toEqual([{ subject: "Weather" }]);
  });

  it("a refused change records nothing", async () => {
    const { client, tenant } = await setUp();
    await client.post("/dashboard/services", { ...SERVICE, baseUrl: "http://10.0.0.1/" });
    const n = await env.DB.prepare("SELECT count(*) AS n FROM account_events WHERE tenant_id = ? AND action != 'signed-in'")
      .bind(tenant.id)
      .first<{ n: number }>();
    expect(n!.n).toBe(0);
  });
});
