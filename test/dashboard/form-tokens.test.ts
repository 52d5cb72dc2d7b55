// Double-submit protection: every create form of the dashboard carries a one-time token as rendered; the same form
// posted three times, one after another or all at once, creates one object, and every post lands where the first went.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApiKey } from "../support/factories.ts";
import { inboxUrl, newInbox } from "../webhooks/support.ts";
import { type DashboardClient, dashboardApp, signedIn } from "./dashboard-client.ts";

const app = dashboardApp();

/** The token rendered into the form posting to `action` on the page at `path`. */
async function tokenOf(client: DashboardClient, path: string, action: string) {
  const html = await (await client.get(path)).text();
  const at = html.indexOf(`action="${action}"`);
  expect(at, `a form posting to ${action} on ${path}`).toBeGreaterThan(-1);
  const token = /<input type="hidden" name="formToken" value="([0-9a-f]{32})"\/>/.exec(
    html.slice(at, html.indexOf("</form>", at)),
  )?.[1];
  expect(token, `the form token of ${action}`).toMatch(/^[0-9a-f]{32}$/);
  return token!;
}

const count = async (sql: string, id: string) => (await env.DB.prepare(sql).bind(id).first<{ n: number }>())!.n;

const SERVICE = {
  name: "Weather",
  baseUrl: "https://weather.example.com/v2",
  mode: "testnet",
  networks: ["base-sepolia"],
  authMethod: "none",
  description: "",
};

/** Posts `fields` with the form's token three times in a row, then (a fresh token) three times at once. */
async function postThrice(client: DashboardClient, page: string, action: string, fields: Record<string, string | string[]>) {
  const locations: (string | null)[] = [];
  const token = await tokenOf(client, page, action);
  for (let i = 0; i < 3; i++) {
    const res = await client.post(action, { ...fields, formToken: token }, { showsSecret: true });
    expect(res.status, `post ${i + 1} of ${action}`).toBe(303);
    locations.push(res.headers.get("location"));
  }
  // Each later post lands where the first went.
  expect(new Set(locations).size, locations.join(" ")).toBe(1);
  const again = await tokenOf(client, page, action);
  expect(again).not.toBe(token);
  const concurrent = await Promise.all(
    [0, 1, 2].map(() =>
      client.post(action, { ...fields, name: `${fields.name ?? ""}2`, formToken: again }, { showsSecret: true }),
    ),
  );
  expect(concurrent.map((r) => r.status)).toEqual([303, 303, 303]);
  return locations[0]!;
}

describe("one-time form tokens", () => {
  it("a key, a service, a paywall and a webhook endpoint are each created once per token, whether posted in a row or at once", async () => {
    const { client, tenant } = await signedIn(app);

    await postThrice(client, "/dashboard/keys", "/dashboard/keys", { name: "deploy", preset: "read-only" });
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?", tenant.id)).toBe(2);

    await postThrice(client, "/dashboard/services/new", "/dashboard/services", SERVICE);
    expect(await count("SELECT count(*) AS n FROM services WHERE tenant_id = ?", tenant.id)).toBe(2);

    const serviceId = (await env.DB.prepare("SELECT id FROM services WHERE tenant_id = ? LIMIT 1")
      .bind(tenant.id)
      .first<{ id: string }>())!.id;
    const paywall = {
      name: "Forecast",
      price: "0.01",
      targetType: "ROUTE",
      targetRoute: "/v1/forecast",
      networks: "base-sepolia",
      allowedMethods: "GET",
      fulfillmentMode: "PROXY",
      timeout: "45",
      enabled: "true",
      serviceId,
    };
    let n = 0;
    const token = await tokenOf(client, `/dashboard/paywalls/new?service=${serviceId}`, "/dashboard/paywalls");
    for (let i = 0; i < 3; i++)
      expect((await client.post("/dashboard/paywalls", { ...paywall, slug: `forecast-${n++}`, formToken: token })).status).toBe(
        303,
      );
    const again = await tokenOf(client, `/dashboard/paywalls/new?service=${serviceId}`, "/dashboard/paywalls");
    await Promise.all(
      [0, 1, 2].map(() => client.post("/dashboard/paywalls", { ...paywall, slug: `forecast-${n++}`, formToken: again })),
    );
    expect(await count("SELECT count(*) AS n FROM paywalls WHERE tenant_id = ?", tenant.id)).toBe(2);

    await postThrice(client, "/dashboard/webhooks", "/dashboard/webhooks", {
      url: inboxUrl(newInbox("once")),
      events: "transaction.completed",
    });
    expect(await count("SELECT count(*) AS n FROM webhook_endpoints WHERE tenant_id = ?", tenant.id)).toBe(2);
  });

  it("rolling a key makes one new key per token; the repeat lands on the page the first post went to", async () => {
    const { client, tenant } = await signedIn(app);
    const { row } = await createApiKey({ tenant, name: "ci" });
    const token = await tokenOf(client, `/dashboard/keys/${row.id}/roll`, `/dashboard/keys/${row.id}/roll`);
    const first = await client.post(
      `/dashboard/keys/${row.id}/roll`,
      { graceSeconds: "3600", formToken: token },
      { showsSecret: true },
    );
    expect(first.status).toBe(303);
    const again = await client.post(`/dashboard/keys/${row.id}/roll`, { graceSeconds: "3600", formToken: token });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    // The key was shown once (with the first answer's page); the repeat shows no key.
    expect(await (await client.get(again.headers.get("location")!, {}, true)).text()).toContain('id="new-key"');
    expect(await (await client.get(again.headers.get("location")!)).text()).not.toContain('id="new-key"');
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?", tenant.id)).toBe(2);
  });

  it("a form refused for its errors gives its token back: corrected and sent again with it, it creates", async () => {
    const { client, tenant } = await signedIn(app);
    const token = await tokenOf(client, "/dashboard/keys", "/dashboard/keys");
    expect((await client.post("/dashboard/keys", { name: "", preset: "read-only", formToken: token })).status).toBe(400);
    expect(
      (await client.post("/dashboard/keys", { name: "fixed", preset: "read-only", formToken: token }, { showsSecret: true }))
        .status,
    ).toBe(303);
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?", tenant.id)).toBe(1);
  });

  it("another session's token is its own: the same value in another session creates there", async () => {
    const a = await signedIn(app);
    const b = await signedIn(app);
    const token = await tokenOf(a.client, "/dashboard/keys", "/dashboard/keys");
    expect(
      (await a.client.post("/dashboard/keys", { name: "a", preset: "read-only", formToken: token }, { showsSecret: true }))
        .status,
    ).toBe(303);
    const other = await b.client.post(
      "/dashboard/keys",
      { name: "b", preset: "read-only", formToken: token },
      { showsSecret: true },
    );
    expect(other.status).toBe(303);
    expect(await count("SELECT count(*) AS n FROM api_keys WHERE tenant_id = ?", b.tenant.id)).toBe(1);
  });
});
