import type { Context } from "hono";
import { getConfig } from "../../core/config.ts";
import { withoutPatterns } from "../../core/discovery/json-schema.ts";
import { type ServiceTool, serviceTools } from "../../core/discovery/mcp.ts";
import { ApiError } from "../../core/http/errors.ts";
import { networkTable } from "../../core/money/network-table.ts";
import { countClient } from "../../core/rate-limit/limiter.ts";
import { getDb } from "../../db/client.ts";
import { findDiscoveryService, findDiscoveryState } from "../../db/discovery.ts";
import type { ServiceRow } from "../../db/schema.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";
import { forward } from "../discovery/access.ts";
import type { GatewayEnv } from "../env.ts";
import { checkedHeaders, type KeptList, keepList, keptAnswer, plainListId } from "./kept-list.ts";
import { paidCall } from "./paid-call.ts";

/**
 * `/api/mcp/:serviceId`: the service's MCP server (docs/mcp.md), MCP's Streamable HTTP transport without sessions.
 * Every POST stands alone: the service's tools are built from its rows (src/core/discovery/mcp.ts), a fresh SDK
 * server and transport answer the one JSON-RPC message, JSON in, JSON out; a plain `tools/list` the SDK has answered
 * before for the same state and headers is answered with its kept answer (kept-list.ts). The SDK (lib.ts) is loaded
 * here only.
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
  // The service's tools are read while the client address is counted; nothing is answered before the count.
  const building = toolsOf(c.env, c.req.param("serviceId") ?? "");
  building.catch(() => {});
  await countClient(c);
  const lib = await mcpLib();
  const read = await lib.readRequestBody(c.req.raw, MAX_MCP_BODY_BYTES).catch(() => undefined);
  if (!read) throw new ApiError("VALIDATION_ERROR", "The request body was not received in full");
  if (read.tooLarge) return rpcError(413, -32000, lib.requestBodyTooLargeMessage(MAX_MCP_BODY_BYTES));
  if (read.text.trimStart().startsWith("[")) {
    return rpcError(400, -32600, "Invalid Request: batches are not supported; send one JSON-RPC message per request");
  }
  const built = await building;
  if (!built) throw new ApiError("NOT_FOUND", "No such service");
  // The body is read once, here: the transport takes the parsed message (and refuses what is not JSON-RPC).
  const parsedBody = parsedJson(read.text);
  if (parsedBody === undefined) return rpcError(400, -32700, "Parse error: Invalid JSON");
  const listId = plainListId(parsedBody);
  if (listId === undefined) return await sdkAnswer(c, lib, built, parsedBody);
  const listKey = `${built.key}\n${checkedHeaders(c.req.raw.headers)}`;
  const kept = keptLists.get(listKey);
  if (kept) return keptAnswer(kept, listId, c.req.raw);
  const res = await sdkAnswer(c, lib, built, parsedBody);
  const body = await res.text();
  const fresh = keepList(res.status, res.headers, body, listId);
  if (fresh) keptLists.set(listKey, fresh);
  return new Response(body, { status: res.status, headers: res.headers });
}

/** The SDK's answer to one message: a fresh server and stateless transport (neither can take a second request). */
async function sdkAnswer(c: Ctx, lib: Lib, built: Built, parsedBody: unknown): Promise<Response> {
  const server = mcpServer(c, lib, built.service, built.tools);
  const transport = new lib.WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw, { parsedBody });
  } finally {
    await server.close().catch(() => {});
  }
}

/** A JSON text's value; `undefined` when it is not JSON. */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

interface Built {
  /** The state the tools were built at (findDiscoveryState) and the payment origin. */
  key: string;
  service: ServiceRow;
  tools: ServiceTool[];
}

/** The tools each isolate built, by the state they were built at and the payment origin. */
const keptTools = new BoundedCache<Built>(256, () => 1);

/**
 * The SDK's answers to a plain `tools/list` (kept-list.ts), by the tools' key and the headers the transport checked:
 * a new state is a new key, so a disabled paywall or a new price shows at once. At most 8 MiB in all (a list of 100
 * tools is about 96 KiB).
 */
const keptLists = new BoundedCache<KeptList>(8 * 1024 * 1024, (kept) => kept.head.byteLength + kept.gzip.deflated.byteLength);

/**
 * A service's tools: built from its rows, or as this isolate built them at the same catalog version and wallets (one
 * small read instead of the service's paywalls; a write of any of the tenant's services or paywalls moves the version,
 * so a disabled paywall or a new price shows at once). `undefined`: no such service.
 */
async function toolsOf(env: Env, serviceId: string): Promise<Built | undefined> {
  const db = getDb(env.DB);
  const { paymentBaseUrl } = getConfig(env);
  const state = await findDiscoveryState(db, serviceId);
  if (state === undefined) return undefined;
  const key = `${state}\n${paymentBaseUrl}`;
  const kept = keptTools.get(key);
  if (kept) return kept;
  const found = await findDiscoveryService(db, serviceId);
  if (!found) return undefined;
  const tools = serviceTools({ paymentBaseUrl, table: networkTable(env), ...found });
  const built = { key, service: found.service, tools };
  keptTools.set(key, built);
  return built;
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
  server.setRequestHandler(lib.CallToolRequestSchema, (request) =>
    callTool(c, lib, service, validator, byName, request).catch((err: unknown) => {
      throw publicError(lib, err, c.get("requestId"));
    }),
  );
  return server;
}

/**
 * What a tool call's failure tells the client. The SDK sends any thrown error's `message` as a `-32603` answer; an
 * `McpError` is a refusal written for the client, anything else is unexpected (a storage error may name its SQL): it
 * is logged, and the client gets a generic message with the request's id, never the error's text.
 */
export function publicError(lib: Pick<Lib, "McpError" | "ErrorCode">, err: unknown, requestId?: string): Error {
  if (err instanceof lib.McpError) return err;
  console.error(JSON.stringify({ gateway: "mcp-call-failed", requestId, error: String(err) }));
  const ref = requestId ? ` (request ${requestId})` : "";
  return new lib.McpError(
    lib.ErrorCode.InternalError,
    `The call failed inside the gateway${ref}; nothing was charged unless a transaction says so`,
  );
}

async function callTool(
  c: Ctx,
  lib: Lib,
  service: ServiceRow,
  validator: InstanceType<Lib["CfWorkerJsonSchemaValidator"]>,
  byName: Map<string, ServiceTool>,
  request: { params: { name: string; arguments?: Record<string, unknown>; _meta?: unknown } },
) {
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
