// "What agents see" of a service: linked from the services page, with the discovery URLs, the routes listed, the
// same diagnostics as the API's preview, and the document; another tenant's service is not found.
import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";
import { createPaywall, createService, routePaywallBody } from "../support/resources.ts";
import { page, signIn, text } from "./insights-support.ts";

async function tenantWithService() {
  const { key, tenant } = await createApiKey();
  const who = { key, tenant };
  const svc = await createService(who, {
    name: "Weather Pro",
    networks: ["base-sepolia", "tempo-testnet"],
    publicRoutes: ["/status"],
  });
  const forecast = await createPaywall(
    who,
    routePaywallBody(svc.id, { name: "Forecast", price: "10000", networks: ["base-sepolia", "tempo-testnet"] }),
  );
  const retired = await createPaywall(who, routePaywallBody(svc.id, { name: "Retired", enabled: false }));
  return { who, svc, forecast, retired, cookie: await signIn(tenant) };
}

describe("the discovery page of a service", () => {
  it("is linked from the services page, which shows the service's discovery URLs", async () => {
    const { svc, cookie } = await tenantWithService();
    const { html } = await page(cookie, "/dashboard/services");
    expect(html).toContain(`href="/dashboard/services/${svc.id}/discovery"`);
    expect(text(html)).toContain(
      `Discovery What agents see (document, llms.txt, diagnostics) OpenAPI ${svc.discovery.openapiUrl} llms.txt ${svc.discovery.llmsTxtUrl}`,
    );
  });

  it("shows the URLs, the routes listed (not the disabled paywall), the API's diagnostics and the document", async () => {
    const { who, svc, forecast, retired, cookie } = await tenantWithService();
    const { status, html } = await page(cookie, `/dashboard/services/${svc.id}/discovery`);
    expect(status).toBe(200);
    const seen = text(html);
    expect(seen).toContain("What agents see: Weather Pro");
    expect(html).toContain(`<code id="discovery-openapi">${svc.discovery.openapiUrl}</code>`);
    expect(html).toContain('aria-label="Copy the llms.txt URL"');
    // Copy buttons wait for the script that makes them work: without JavaScript none shows.
    const copyButtons = html.match(/<button[^>]*data-copy=[^>]*>/g) ?? [];
    expect(copyButtons).toHaveLength(2);
    for (const button of copyButtons) expect(button).toMatch(/\shidden(=""|\s|>)/);
    expect(seen).toContain(`GET ${new URL(forecast.paymentUrls.x402 as string).pathname} x402 0.01 USD base-sepolia`);
    expect(seen).toContain(`GET ${new URL(forecast.paymentUrls.mpp as string).pathname} MPP 0.01 USD tempo-testnet`);
    expect(seen).toContain(`GET /api/public/${svc.id}/status Free`);
    expect(html).not.toContain(`/pay/${svc.id}/${retired.slug}<`);
    const preview = (await api(`/v1/services/${svc.id}/discovery`, { key: who.key })).body.data;
    for (const d of preview.diagnostics) expect(seen).toContain(`${d.severity} ${d.code}`);
    expect(seen).toContain(`warn INPUT_SCHEMA_MISSING Paywall "${forecast.slug}" has no inputSchema`);
    expect(seen).toContain("No facilitator has said yet");
    expect(html).toContain("&quot;openapi&quot;: &quot;3.1.0&quot;");
  });

  it("another tenant's service, or none, is a 404 that shows nothing of it", async () => {
    const mine = await tenantWithService();
    const theirs = await tenantWithService();
    for (const id of [theirs.svc.id, "svc_000000000000000000000000"]) {
      const { status, html } = await page(mine.cookie, `/dashboard/services/${id}/discovery`);
      expect(status).toBe(404);
      expect(html).toContain("None of your services has this id.");
      expect(html).not.toContain(theirs.forecast.slug);
    }
  });
});
