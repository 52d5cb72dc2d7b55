// What the dashboard's forms start with, server-rendered (so without JavaScript too), and the paywall form's cache
// rules and schemas: set in the form, read back through the API, refused field by field. Also the small words a
// newcomer reads: amounts with as many decimals as they need, a key's permissions said once, a link's lifetime.
import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import { dashboardApp, signedIn } from "./dashboard-client.ts";

const app = dashboardApp();

async function setUp() {
  const session = await signedIn(app);
  const { key } = await createApiKey({ tenant: session.tenant });
  return { ...session, key };
}

/** The `<input>` or `<option>` with this id or value attribute, as rendered. */
const tagWith = (html: string, attr: string) => new RegExp(`<(?:input|option)[^>]*${attr}[^>]*>`).exec(html)?.[0] ?? "";
const isChecked = (html: string, id: string) => /\schecked(=|\s|\/|>)/.test(tagWith(html, `id="${id}"`));
const checkedIds = (html: string, prefix: string) =>
  [...html.matchAll(new RegExp(`<input[^>]*id="(${prefix}[^"]+)"[^>]*>`, "g"))]
    .filter((m) => /\schecked(=|\s|\/|>)/.test(m[0]))
    .map((m) => m[1]);

const idOf = (location: string | null) => new URL(`https://x${location}`).searchParams.get("id") as string;

const SERVICE = {
  name: "Weather",
  baseUrl: "https://weather.example.com",
  mode: "testnet",
  networks: ["base-sepolia", "arc-testnet"],
  authMethod: "none",
};

describe("forms start with sensible defaults", () => {
  it("a new key is read-only; a new webhook gets every payment event; a new service two testnet networks", async () => {
    const { client } = await setUp();
    const keys = (await client.text("/dashboard/keys")).html;
    expect(isChecked(keys, "new-preset-read-only")).toBe(true);
    expect(isChecked(keys, "new-preset-full")).toBe(false);

    const hooks = (await client.text("/dashboard/webhooks")).html;
    expect(checkedIds(hooks, "new-event-")).toEqual([
      "new-event-transaction-completed",
      "new-event-transaction-failed",
      "new-event-transaction-pending",
    ]);

    const service = (await client.text("/dashboard/services/new")).html;
    expect(isChecked(service, "svc-mode-testnet")).toBe(true);
    expect(checkedIds(service, "svc-net-")).toEqual(["svc-net-base-sepolia", "svc-net-tempo-testnet"]);
  });

  it("a paywall opened from a service's page targets a route of it on the service's networks", async () => {
    const { client, key } = await setUp();
    const serviceId = idOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    const services = (await client.text("/dashboard/services")).html;
    expect(services).toContain(`href="/dashboard/paywalls/new?service=${serviceId}"`);

    const form = (await client.text(`/dashboard/paywalls/new?service=${serviceId}`)).html;
    expect(tagWith(form, `value="${serviceId}"`)).toMatch(/selected/);
    expect(tagWith(form, `value="${serviceId}"`)).toContain('data-networks="base-sepolia arc-testnet"');
    expect(isChecked(form, "pw-targetType-ROUTE")).toBe(true);
    expect(isChecked(form, "pw-targetType-PROXY")).toBe(false);
    expect(checkedIds(form, "pw-net-").sort()).toEqual(["pw-net-arc-testnet", "pw-net-base-sepolia"]);

    // Posted as it starts, with only a slug, a name and a price: the service's networks, the slug's route.
    const fields: Record<string, string | string[]> = {
      serviceId,
      targetType: "ROUTE",
      networks: ["base-sepolia", "arc-testnet"],
      allowedMethods: "GET",
      fulfillmentMode: "PROXY",
      timeout: "60",
      enabled: "true",
      cacheVaryBody: "true",
      slug: "quote",
      name: "Quote",
      price: "0.0015",
      targetRoute: "",
    };
    const created = await client.post("/dashboard/paywalls", fields);
    expect(created.status).toBe(303);
    expect((await api(`/v1/paywalls/${idOf(created.headers.get("location"))}`, { key })).body.data).toMatchObject({
      targetType: "ROUTE",
      targetRoute: "/quote",
      serviceId,
      networks: ["base-sepolia", "arc-testnet"],
      price: "1500",
      cacheRules: null,
      inputSchema: null,
    });
  });

  it("a paywall without a service (or an unknown one) targets an upstream URL on base-sepolia", async () => {
    const { client } = await setUp();
    for (const path of ["/dashboard/paywalls/new", "/dashboard/paywalls/new?service=svc_000000000000000000000000"]) {
      const form = (await client.text(path)).html;
      expect(isChecked(form, "pw-targetType-PROXY"), path).toBe(true);
      expect(checkedIds(form, "pw-net-"), path).toEqual(["pw-net-base-sepolia"]);
    }
  });
});

const PAYWALL = {
  slug: "forecast",
  name: "Forecast",
  price: "0.01",
  targetType: "ROUTE",
  targetRoute: "/v1/forecast",
  networks: "base-sepolia",
  allowedMethods: "GET",
  fulfillmentMode: "PROXY",
  timeout: "60",
  enabled: "true",
};

describe("cache rules and schemas in the paywall form", () => {
  it("are stored as the API takes them, read back through the API, shown again on edit, and cleared when emptied", async () => {
    const { client, key } = await setUp();
    const serviceId = idOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    const inputSchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const outputSchema = { type: "object", properties: { tempC: { type: "number" } } };
    const created = await client.post("/dashboard/paywalls", {
      ...PAYWALL,
      serviceId,
      cacheTtlSeconds: "300",
      cacheVaryQuery: "city, days",
      cacheVaryHeaders: "Accept",
      cacheStatuses: "200, 203",
      inputSchema: JSON.stringify(inputSchema),
      outputSchema: JSON.stringify(outputSchema, null, 2),
    });
    expect(created.status).toBe(303);
    const id = idOf(created.headers.get("location"));
    expect((await api(`/v1/paywalls/${id}`, { key })).body.data).toMatchObject({
      cacheRules: {
        ttlSeconds: 300,
        varyQuery: ["city", "days"],
        varyHeaders: ["Accept"],
        varyBody: false,
        statuses: [200, 203],
      },
      inputSchema,
      outputSchema,
    });

    const edit = (await client.text(`/dashboard/paywalls/${id}/edit`)).html;
    expect(edit).toContain('id="pw-cacheTtlSeconds" type="number" name="cacheTtlSeconds" value="300"');
    expect(edit).toContain('value="city, days"');
    expect(isChecked(edit, "pw-cacheVaryBody")).toBe(false);
    expect(edit).toContain("&quot;city&quot;");

    // An edit through the API meanwhile adds a key the form has no field for: the form keeps it.
    const ver = await api(`/v1/paywalls/${id}`, {
      key,
      method: "PATCH",
      body: { cacheRules: { ttlSeconds: 300, note: "kept" } },
    });
    expect(ver.status).toBe(200);
    const saved = await client.post(`/dashboard/paywalls/${id}/edit`, {
      ...PAYWALL,
      serviceId,
      cacheTtlSeconds: "60",
      cacheVaryBody: "true",
      inputSchema: "",
      outputSchema: "",
      version: "2",
    });
    expect(saved.status, (await saved.clone().text()).match(/field-error.*?<\/p>|notice error.*?<\/div>/g)?.join()).toBe(303);
    expect((await api(`/v1/paywalls/${id}`, { key })).body.data).toMatchObject({
      cacheRules: { ttlSeconds: 60, note: "kept" },
      inputSchema: null,
      outputSchema: null,
    });

    const cleared = await client.post(`/dashboard/paywalls/${id}/edit`, { ...PAYWALL, serviceId, version: "3" });
    expect(cleared.status).toBe(303);
    expect((await api(`/v1/paywalls/${id}`, { key })).body.data.cacheRules).toEqual({ note: "kept" });
  });

  it("refuses each bad field by its label, keeps what was typed, and stores nothing", async () => {
    const { client, key } = await setUp();
    const serviceId = idOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    const res = await client.post("/dashboard/paywalls", {
      ...PAYWALL,
      serviceId,
      cacheTtlSeconds: "86401",
      cacheStatuses: "200, 404",
      inputSchema: '{"type": "object", ',
      outputSchema: '{"type": "strin"}',
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain(
      '<p id="pw-cacheTtlSeconds-error" class="field-error"><span>Cache answers for (seconds): Must be an integer',
    );
    expect(html).toContain('<p id="pw-cacheStatuses-error" class="field-error"><span>Cached statuses: Must be a list of 1 to 10');
    expect(html).toContain('<p id="pw-inputSchema-error" class="field-error"><span>Input schema (JSON): Not valid JSON');
    expect(html).toContain('<p id="pw-outputSchema-error" class="field-error"><span>Output schema (JSON): ');
    expect(html).toMatch(/<textarea aria-invalid="true"[^>]*id="pw-inputSchema"/);
    expect(html).toContain("{&quot;type&quot;: &quot;object&quot;, </textarea>");
    expect(html).toContain('href="#pw-cacheTtlSeconds"');
    const list = await api(`/v1/paywalls?serviceId=${serviceId}`, { key });
    expect(list.body.data).toEqual([]);
  });
});

describe("words a newcomer reads", () => {
  it("prices with at least two decimals and never rounded; a write permission says its read permission once", async () => {
    const { client } = await setUp();
    const serviceId = idOf((await client.post("/dashboard/services", SERVICE)).headers.get("location"));
    expect((await client.post("/dashboard/paywalls", { ...PAYWALL, serviceId, price: "0.0015" })).status).toBe(303);
    expect((await client.post("/dashboard/paywalls", { ...PAYWALL, slug: "b", serviceId, price: "2" })).status).toBe(303);
    const page = (await client.text("/dashboard/services")).html;
    expect(page).toContain("<dd>0.0015 USDC</dd>");
    expect(page).toContain("<dd>2.00 USDC</dd>");

    const made = await client.post("/dashboard/keys", { name: "everything", preset: "full" }, { showsSecret: true });
    expect(made.status).toBe(303);
    const keys = (await client.text("/dashboard/keys")).html;
    expect(keys).toContain("services:read, services:write, paywalls:read");
    expect(keys).not.toContain("(+ services:read)");
  });

  it("the sign-in page and a link's page say how long a link lasts", async () => {
    const anonymous = (await signedIn(app)).client;
    anonymous.cookies.clear();
    expect((await anonymous.text("/dashboard/sign-in")).html).toContain("valid for 10 minutes");
    expect((await anonymous.text("/dashboard/sign-in/link?token=x")).html).toContain("It works once, within 10 minutes");
  });
});
