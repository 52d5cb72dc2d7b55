import type { ServiceRow } from "../../db/schema.ts";

/**
 * A service's MCP server on its page (docs/mcp.md): the endpoint's URL and a configuration to paste into an MCP host
 * (`mcpServers`, Streamable HTTP). Tenant text only as JSX text: the JSON is rendered escaped.
 */
export function McpServerConfig({ service, url }: { service: Pick<ServiceRow, "id" | "name">; url: string }) {
  const name =
    service.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || service.id;
  const config = JSON.stringify({ mcpServers: { [name]: { type: "http", url } } }, null, 2);
  return (
    <div class="payurl">
      <span class="hint">MCP server</span>
      <code>{url}</code>
      <details>
        <summary>
          Client configuration<span class="sr-only"> for {service.name}</span>
        </summary>
        <pre>
          <code>{config}</code>
        </pre>
      </details>
    </div>
  );
}
