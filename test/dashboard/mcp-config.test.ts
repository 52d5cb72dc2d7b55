// The services page shows each service's MCP server (docs/mcp.md): its URL and a client configuration to paste into
// an MCP host, with the service's name made inert.
import { describe, expect, it } from "vitest";
import { createApiKey } from "../support/factories.ts";
import { createService } from "../support/resources.ts";
import { page, signIn, text } from "./insights-support.ts";

describe("a service's MCP server on the services page", () => {
  it("shows the URL and a configuration an MCP host reads as JSON", async () => {
    const { key, tenant } = await createApiKey();
    const svc = await createService({ key, tenant }, { name: "Weather Pro" });
    const { html } = await page(await signIn(tenant), "/dashboard/services");
    const seen = text(html);
    expect(seen).toContain(`MCP server ${svc.discovery.mcpUrl}`);
    const config = /<pre><code>([^<]*)<\/code><\/pre>/.exec(html)?.[1] ?? "";
    const parsed = JSON.parse(config.replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
    expect(parsed).toEqual({ mcpServers: { "weather-pro": { type: "http", url: svc.discovery.mcpUrl } } });
  });

  it("escapes a hostile service name", async () => {
    const { key, tenant } = await createApiKey();
    await createService({ key, tenant }, { name: '<img src=x onerror=alert(1)> "Pro"' });
    const { html } = await page(await signIn(tenant), "/dashboard/services");
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });
});
