import type { Context } from "hono";
import { getConfig } from "../../core/config.ts";
import { withoutPatterns } from "../../core/discovery/json-schema.ts";
import { type ServiceTool, serviceTools } from "../../core/discovery/mcp.ts";
import { ApiError } from "../../core/http/errors.ts";
import { networkTable } from "../../core/money/network-table.ts";
import { countClient } from "../../core/rate-limit/limiter.ts";
import { getDb } from "../../db/client.ts";
import { findDiscoveryService } from "../../db/discovery.ts";
import type { ServiceRow } from "../../db/schema.ts";
import { forward } from "../discovery/access.ts";
import type { GatewayEnv } from "../env.ts";
import { paidCall } from "./paid-call.ts";

/**
 * `/api/mcp/:serviceId`: the service's MCP server (docs/mcp.md), MCP's Streamable HTTP transport without sessions.
 * Every POST stands alone: the service's tools are built from its rows (src/core/discovery/mcp.ts), a fresh SDK
 * server and transport answer the one JSON-RPC message, JSON in, JSON out. The SDK (lib.ts) is loaded here only.
 *
 * What the SDK's transport does not refuse is refused here first: a GET (no server-sent event stream is offered) and
 * a DELETE (no session to end) are 405; a batch is `-32600` (MCP's current revision has none); a body over
 * MAX_MCP_BODY_BYTES is 413. Every refusal is a JSON-RPC error object, never the API's envelope.
 */

type Ctx = Context<GatewayEnv>;

/** Largest JSON-RPC message read, as for a buyer's body on the HTTP routes. */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/** Most characters of an upstream's answer a free tool returns as text. */
export const MAX_TOOL_TEXT_CHARS = 256 * 1024;

const mcpLib = () => import("./lib.ts");
type Lib = Awaited<ReturnType<typeof mcpLib>>;

/** A JSON-RPC error answer with no request id (the message could not be read, or was refused before it was). */
export function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers },
  });
}

/** The endpoint's refusals of its own (rate limit, unknown service) as JSON-RPC errors with their HTTP status. */
export function mcpRefusal(err: unknown): Response {
  if (err instanceof ApiError) {
    const code = err.status === 404 ? -32001 : -32000;
    return rpcError(err.status, code, err.message, err.headers);
  }
  return rpcError(500, -32603, "Internal error");
}

export async function mcpEndpoint(c: Ctx): Promise<Response> {
  try {
    return await answer(c);
  } catch (err) {
    return mcpRefusal(err);
  }
}

async function answer(c: Ctx): Promise<Response> {
  if (c.req.method !== "POST") {
    return rpcError(405, -32000, "Method not allowed: this MCP server is stateless, POST only", { Allow: "POST" });
  }
  await countClient(c);
  const lib = await mcpLib();
  const read = await lib.readRequestBody(c.req.raw, MAX_MCP_BODY_BYTES).catch(() => undefined);
  if (!read) throw new ApiError("VALIDATION_ERROR", "The request body was not received in full");
  if (read.tooLarge) return rpcError(413, -32000, lib.requestBodyTooLargeMessage(MAX_MCP_BODY_BYTES));
  if (read.text.trimStart().startsWith("[")) {
    return rpcError(400, -32600, "Invalid Request: batches are not supported; send one JSON-RPC message per request");
  }
  const found = await findDiscoveryService(getDb(c.env.DB), c.req.param("serviceId") ?? "");
  if (!found) throw new ApiError("NOT_FOUND", "No such service");
  const tools = serviceTools({ paymentBaseUrl: getConfig(c.env).paymentBaseUrl, table: networkTable(c.env), ...found });
  const server = mcpServer(c, lib, found.service, tools);
  const transport = new lib.WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
  });
  await server.connect(transport);
  const request = new Request(c.req.raw.url, { method: "POST", headers: c.req.raw.headers, body: read.text });
  try {
    return await transport.handleRequest(request);
  } finally {
    await server.close().catch(() => {});
  }
}

function mcpServer(c: Ctx, lib: Lib, service: ServiceRow, tools: ServiceTool[]) {
  const validator = new lib.CfWorkerJsonSchemaValidator();
  const server = new lib.Server(
    { name: `paywall-${service.id}`, title: service.name, version: String(service.version) },
    {
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator: validator,
      instructions:
        "Each tool is one paid route of this service (its price, networks and payment protocols are in its description " +
        "and in _meta['x-payment-info']), or one of its free routes. Pay a tool call over x402 (_meta['x402/payment']) " +
        "or MPP (_meta['org.paymentauth/credential']): an unpaid call answers with the terms.",
    },
  );
  const byName = new Map(tools.map((entry) => [entry.tool.name, entry]));
  server.setRequestHandler(lib.ListToolsRequestSchema, () => ({ tools: tools.map((entry) => entry.tool) }));
  server.setRequestHandler(lib.CallToolRequestSchema, async (request) => {
    const entry = byName.get(request.params.name);
    if (!entry) throw new lib.McpError(lib.ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const args = request.params.arguments ?? {};
    // The tenant's `pattern`s are never run in the Worker (no ReDoS): the rest of the schema is checked.
    const check = validator.getValidator(withoutPatterns(entry.tool.inputSchema) as { type: "object" });
    const result = check(args);
    if (!result.valid) {
      throw new lib.McpError(
        lib.ErrorCode.InvalidParams,
        `Invalid arguments for tool ${entry.tool.name}: ${result.errorMessage ?? "they do not match its input schema"}`,
      );
    }
    if (entry.target.kind === "free") return callFree(c, service, entry.target.route, args);
    const meta = request.params._meta as Record<string, unknown> | undefined;
    return paidCall({ c, lib, tool: entry.tool, target: entry.target, args, meta });
  });
  return server;
}

/** A free tool: the route's upstream answer, its body as text (JSON as written), or a tool error. */
async function callFree(c: Ctx, service: ServiceRow, route: string, args: Record<string, unknown>) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    query.append(name, typeof value === "string" ? value : JSON.stringify(value));
  }
  let response: Response;
  try {
    response = await forward(c, service, route, {}, { query, headers: new Headers() });
  } catch (err) {
    const message = err instanceof ApiError ? err.message : "The upstream could not be reached";
    return { isError: true, content: [{ type: "text" as const, text: message }] };
  }
  const body = await response.text();
  const text = body.length > MAX_TOOL_TEXT_CHARS ? `${body.slice(0, MAX_TOOL_TEXT_CHARS)}…` : body;
  return { isError: response.status >= 400, content: [{ type: "text" as const, text }] };
}
