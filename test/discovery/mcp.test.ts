// A service's MCP server on the payment origin (docs/mcp.md): `/api/mcp/{serviceId}`, MCP's Streamable HTTP transport
// without sessions. Its tools are generated from the rows on every request (a disabled paywall or a new price shows
// at once), every bad request gets its JSON-RPC error and HTTP status, never a 5xx, and the service answers, the
// discovery document and llms.txt name the endpoint.
import { describe, expect, it } from "vitest";
import { api, send } from "../support/client.ts";
import { actor, createPaywall, createService, routePaywallBody } from "../support/resources.ts";

const PAY = "https://pay.example.com";
const ACCEPT = "application/json, text/event-stream";
const VERSION = "2025-11-25";

interface Rpc {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are read field by field
  body: any;
}

async function post(serviceId: string, body: string, headers: Record<string, string> = {}): Promise<Rpc> {
  const res = await send(
    new Request(`${PAY}/api/mcp/${serviceId}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: ACCEPT, "MCP-Protocol-Version": VERSION, ...headers },
      body,
    }),
  );
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

let nextId = 1;
const rpc = (serviceId: string, method: string, params?: unknown, headers?: Record<string, string>) =>
  post(serviceId, JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, ...(params ? { params } : {}) }), headers);

async function listTools(serviceId: string) {
  const res = await rpc(serviceId, "tools/list");
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: tools as the client reads them
  return res.body.result.tools as any[];
}

const INPUT = {
  type: "object",
  properties: { city: { type: "string", minLength: 2 }, days: { type: "integer", maximum: 7 } },
  required: ["city"],
};
const OUTPUT = { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] };

async function setup() {
  const who = await actor();
  const svc = await createService(who, { publicRoutes: ["/v1/status"] });
  const forecast = await createPaywall(
    who,
    routePaywallBody(svc.id, {
      slug: "forecast",
      description: "Five-day forecast for a city.",
      allowedMethods: ["GET"],
      networks: ["base-sepolia", "tempo-testnet"],
      inputSchema: INPUT,
      outputSchema: OUTPUT,
    }),
  );
  const reports = await createPaywall(
    who,
    routePaywallBody(svc.id, { slug: "reports", name: "Reports", price: "250000", allowedMethods: ["GET", "POST"] }),
  );
  return { who, svc, forecast, reports };
}

describe("the MCP endpoint's tools", () => {
  it("initialize names the service and offers tools, without a session", async () => {
    const { svc } = await setup();
    const res = await rpc(svc.id, "initialize", {
      protocolVersion: VERSION,
      capabilities: {},
      clientInfo: { name: "test", version: "1" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(res.body.result).toMatchObject({
      protocolVersion: VERSION,
      capabilities: { tools: {} },
      serverInfo: { title: "Weather API", version: expect.any(String) },
    });
  });

  it("tools/list gives each enabled paywall and method a tool, with price, schemas and terms, and free routes", async () => {
    const { svc } = await setup();
    const tools = await listTools(svc.id);
    expect(tools.map((t) => t.name)).toEqual(["forecast", "reports_GET", "reports_POST", "FREE_v1_status"]);
    const [forecast, reportsGet, reportsPost, free] = tools;
    expect(forecast).toMatchObject({
      title: "Forecast (GET, 0.01 USD)",
      inputSchema: INPUT,
      annotations: { readOnlyHint: true },
    });
    // Paid over x402, whose unpaid answer's structured content is its PaymentRequired: no outputSchema, the
    // paywall's in _meta.
    expect(forecast.outputSchema).toBeUndefined();
    expect(forecast._meta["x-output-schema"]).toEqual(OUTPUT);
    expect(forecast.description).toContain("Five-day forecast for a city.");
    expect(forecast.description).toContain("0.01 USD per call, paid over x402 (USDC on base-sepolia) or MPP (");
    const terms = forecast._meta["x-payment-info"];
    expect(terms.price).toEqual({ mode: "fixed", currency: "USD", amount: "0.01" });
    expect(terms.protocols.map((p: object) => Object.keys(p)[0])).toEqual(["x402", "mpp"]);
    expect(terms.offers[0]).toMatchObject({ intent: "charge", method: "tempo", amount: "10000" });
    // No input schema: the query of a GET, a JSON object body otherwise; no output schema, none declared.
    expect(reportsGet.inputSchema).toMatchObject({ type: "object", additionalProperties: { type: "string" } });
    expect(reportsGet.annotations.readOnlyHint).toBe(true);
    expect(reportsPost.inputSchema).toEqual({ type: "object", description: "The JSON body sent to the service, as given" });
    expect(reportsPost.annotations.readOnlyHint).toBe(false);
    expect(reportsPost.outputSchema).toBeUndefined();
    expect(reportsPost.description).toBe("0.25 USD per call, paid over x402 (USDC on base-sepolia).");
    expect(free).toMatchObject({ title: "Free: GET /v1/status", annotations: { readOnlyHint: true } });
    expect(free._meta).toBeUndefined();
  });

  it("a tool paid over MPP only declares the paywall's output schema as its outputSchema", async () => {
    const { who, svc } = await setup();
    await createPaywall(
      who,
      routePaywallBody(svc.id, {
        slug: "tempo-only",
        networks: ["tempo-testnet"],
        allowedMethods: ["GET"],
        outputSchema: OUTPUT,
      }),
    );
    const tool = (await listTools(svc.id)).find((t) => t.name === "tempo-only");
    expect(tool.outputSchema).toEqual(OUTPUT);
    expect(tool.description).toContain("paid over MPP (");
  });

  it("a disabled paywall disappears at once, and comes back when enabled", async () => {
    const { who, svc, forecast } = await setup();
    const off = await api(`/v1/paywalls/${forecast.id}`, { key: who.key, method: "PATCH", body: { enabled: false } });
    expect(off.status, off.text).toBe(200);
    expect((await listTools(svc.id)).map((t) => t.name)).not.toContain("forecast");
    await api(`/v1/paywalls/${forecast.id}`, { key: who.key, method: "PATCH", body: { enabled: true } });
    expect((await listTools(svc.id)).map((t) => t.name)).toContain("forecast");
  });

  it("a price change shows at once, in the description and the terms", async () => {
    const { who, svc, forecast } = await setup();
    expect((await listTools(svc.id)).find((t) => t.name === "forecast").description).toContain("0.01 USD per call");
    const res = await api(`/v1/paywalls/${forecast.id}`, { key: who.key, method: "PATCH", body: { price: "1230000" } });
    expect(res.status, res.text).toBe(200);
    const tool = (await listTools(svc.id)).find((t) => t.name === "forecast");
    expect(tool.description).toContain("1.23 USD per call");
    expect(tool._meta["x-payment-info"].price.amount).toBe("1.23");
  });
});

describe("the MCP endpoint's refusals", () => {
  it.each([
    ["malformed JSON", "{not json", {}, 400, -32700],
    ["a batch", JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list" }]), {}, 400, -32600],
    ["a message that is not JSON-RPC", JSON.stringify({ hello: "world" }), {}, 400, -32700],
    [
      "an Accept without text/event-stream",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      { Accept: "application/json" },
      406,
      -32000,
    ],
    [
      "an unsupported MCP-Protocol-Version",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      { "MCP-Protocol-Version": "1999-01-01" },
      400,
      -32000,
    ],
    [
      "a body that is not JSON",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      { "Content-Type": "text/plain" },
      415,
      -32000,
    ],
    [
      "an oversized body",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(1024 * 1024) } }),
      {},
      413,
      -32000,
    ],
  ])("%s is a JSON-RPC error with its HTTP status", async (_, body, headers, status, code) => {
    const { svc } = await setup();
    const res = await post(svc.id, body, headers as Record<string, string>);
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { message: expect.any(String) } });
  });

  it.each(["GET", "DELETE"])("%s is 405 with Allow: POST (no stream, no session)", async (method) => {
    const { svc } = await setup();
    const res = await send(new Request(`${PAY}/api/mcp/${svc.id}`, { method, headers: { Accept: "text/event-stream" } }));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
  });

  it("an unknown service is 404 with a JSON-RPC error", async () => {
    const res = await rpc("svc_nope", "tools/list");
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 404, code: -32001 });
  });

  it("an unknown method is -32601", async () => {
    const { svc } = await setup();
    const res = await rpc(svc.id, "resources/list");
    expect(res.status).toBe(200);
    expect(res.body.error.code).toBe(-32601);
  });

  it("an unknown tool is -32602, and so is a disabled paywall's", async () => {
    const { who, svc, forecast } = await setup();
    expect((await rpc(svc.id, "tools/call", { name: "nope", arguments: {} })).body.error.code).toBe(-32602);
    await api(`/v1/paywalls/${forecast.id}`, { key: who.key, method: "PATCH", body: { enabled: false } });
    const res = await rpc(svc.id, "tools/call", { name: "forecast", arguments: { city: "Lisbon" } });
    expect(res.body.error).toMatchObject({ code: -32602, message: expect.stringContaining("Unknown tool") });
  });

  it.each([
    ["a missing required property", {}],
    ["a property of the wrong type", { city: 42 }],
    ["a value out of bounds", { city: "Lisbon", days: 30 }],
    ["a string too short", { city: "L" }],
  ])("arguments with %s are -32602 naming the tool, before any payment is asked", async (_, args) => {
    const { svc } = await setup();
    const res = await rpc(svc.id, "tools/call", { name: "forecast", arguments: args });
    expect(res.body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("Invalid arguments for tool forecast"),
    });
    expect(res.body.result).toBeUndefined();
  });

  it("a query argument of a GET without input schema must be a string", async () => {
    const { svc } = await setup();
    const res = await rpc(svc.id, "tools/call", { name: "reports_GET", arguments: { page: 2 } });
    expect(res.body.error.code).toBe(-32602);
  });
});

describe("finding the MCP endpoint", () => {
  it("service answers carry discovery.mcpUrl, and the document and llms.txt name it", async () => {
    const { who, svc } = await setup();
    const url = `${PAY}/api/mcp/${svc.id}`;
    const got = await api<{ data: { discovery: { mcpUrl: string } } }>(`/v1/services/${svc.id}`, { key: who.key });
    expect(got.body.data.discovery.mcpUrl).toBe(url);
    const doc = await send(new Request(`${PAY}/api/discovery/${svc.id}/openapi.json`));
    expect((await doc.json()) as object).toMatchObject({ "x-service-info": { docs: { mcp: url } } });
    const llms = await (await send(new Request(`${PAY}/api/discovery/${svc.id}/llms.txt`))).text();
    expect(llms).toContain(`- [MCP server](${url}):`);
  });
});
