// A service's MCP server paid end to end on the local chains (docs/mcp.md), with clients nobody here wrote:
// `@modelcontextprotocol/sdk`'s Client over its Streamable HTTP transport, wrapped by mppx's `McpClient.wrap` (MPP on
// the local Tempo chain), and an x402 client (`@x402/core`'s x402Client with `@x402/evm`'s ExactEvmScheme) following
// x402's MCP transport (the local EVM chain). Every call goes through the same payment pipeline as HTTP.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { tempo as tempoMethod } from "mppx/client";
import { McpClient } from "mppx/mcp/client";
import { createClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import { balanceOf, buyer, gatewayFetch, history, openShop, type Shop, upstreamRequests } from "./support.ts";
import { mppShop, TEMPO_RPC, tempo, tempoBalanceOf, tempoChain } from "./tempo-support.ts";

/** One method per paywall: its tool is named by the slug alone. */
const GET_ONLY = { allowedMethods: ["GET"] };

const mcpUrl = (shop: Shop) => `${new URL(shop.x402).origin}/api/mcp/${shop.serviceId}`;

async function connect(shop: Shop) {
  // The SDK's default validator (ajv) generates code, which workerd refuses: its Workers-safe one instead.
  const client = new Client({ name: "agent", version: "1" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl(shop)), { fetch: gatewayFetch }));
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: tool results are read field by field
type Result = any;

let nextTempoBuyer = 1;
const tempoAccount = () => {
  const account = tempo.buyers[tempo.buyers.length - 2 - nextTempoBuyer++];
  if (!account) throw new Error("out of funded Tempo buyers");
  return privateKeyToAccount(account.privateKey);
};

describe("MPP over MCP: mppx's McpClient.wrap around the SDK's client", () => {
  it("lists the tools and pays a call: the upstream's answer, a receipt, the recipient up by exactly the price", async () => {
    const shop = await mppShop({ price: "12345", paywall: GET_ONLY });
    const client = await connect(shop);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([shop.slug]);
    expect(tools[0]?.description).toContain("0.012345 USD per call, paid over MPP");
    McpClient.wrap(client, {
      methods: [
        tempoMethod.charge({
          account: tempoAccount(),
          getClient: () => createClient({ chain: tempoChain, transport: http(TEMPO_RPC, { retryCount: 0 }) }),
        }),
      ],
    });
    const result: Result = await client.callTool({ name: shop.slug, arguments: { city: "Oslo" } });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ method: "GET", query: "city=Oslo" });
    expect(result.receipt).toMatchObject({ method: "tempo", status: "success", reference: expect.stringMatching(/^0x/) });
    expect(await tempoBalanceOf(shop.recipient)).toBe(12_345n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    const { transactions, events } = await history(shop);
    expect(transactions).toMatchObject([{ status: "COMPLETED", protocol: "mpp" }]);
    expect(events.find((e) => e.eventType === "REQUEST")?.metadata).toMatchObject({ transport: "mcp", tool: shop.slug });
  }, 60_000);

  it("an unpaid call is JSON-RPC error -32042 with the challenge, and nothing is forwarded", async () => {
    const shop = await mppShop({ price: "2500", paywall: GET_ONLY });
    const client = await connect(shop);
    const error: Result = await client.callTool({ name: shop.slug, arguments: {} }).catch((err: unknown) => err);
    expect(error.code).toBe(-32042);
    expect(error.data.challenges[0]).toMatchObject({ method: "tempo", intent: "charge", request: { amount: "2500" } });
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);
  }, 60_000);
});

describe("x402 over MCP: an x402Client paying per x402's MCP transport", () => {
  async function requiredFor(client: Client, shop: Shop, args: Record<string, unknown>) {
    const unpaid: Result = await client.callTool({ name: shop.slug, arguments: args });
    expect(unpaid.isError).toBe(true);
    return unpaid;
  }

  it("an unpaid call is a tool error carrying PaymentRequired (with Bazaar's MCP form); a paid one settles once", async () => {
    const shop = await openShop({ price: "1234", paywall: GET_ONLY });
    const client = await connect(shop);
    const unpaid = await requiredFor(client, shop, { city: "Lima" });
    const required = unpaid.structuredContent;
    expect(JSON.parse(unpaid.content[0].text)).toEqual(required);
    expect(required).toMatchObject({ x402Version: 2, accepts: [{ scheme: "exact", amount: "1234", payTo: shop.merchant }] });
    expect(required.extensions.bazaar.info.input).toMatchObject({
      type: "mcp",
      toolName: shop.slug,
      transport: "streamable-http",
      inputSchema: { type: "object" },
    });
    expect(await upstreamRequests(shop.prefix)).toHaveLength(0);

    const b = buyer();
    const payload = await b.client.createPaymentPayload(required);
    const paid: Result = await client.callTool({
      name: shop.slug,
      arguments: { city: "Lima" },
      _meta: { "x402/payment": payload },
    });
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ method: "GET", query: "city=Lima" });
    expect(paid._meta["x402/payment-response"]).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x/) });
    expect(await balanceOf(shop.merchant)).toBe(1234n);

    // The same payment again: the same answer, no second charge, no second upstream call.
    const again: Result = await client.callTool({
      name: shop.slug,
      arguments: { city: "Lima" },
      _meta: { "x402/payment": payload },
    });
    expect(again.content).toEqual(paid.content);
    expect(await balanceOf(shop.merchant)).toBe(1234n);
    expect(await upstreamRequests(shop.prefix)).toHaveLength(1);
    const { transactions, events } = await history(shop);
    expect(transactions).toMatchObject([{ status: "COMPLETED", protocol: "x402" }]);
    // The REQUEST event says the payment came through MCP, and by which tool.
    expect(events.find((e) => e.eventType === "REQUEST")?.metadata).toMatchObject({ transport: "mcp", tool: shop.slug });
  }, 60_000);

  it("a failing upstream charges nothing: a tool error with its answer", async () => {
    const shop = await openShop({ price: "4321", paywall: GET_ONLY, route: "/status/503" });
    const client = await connect(shop);
    const unpaid = await requiredFor(client, shop, {});
    const payload = await buyer().client.createPaymentPayload(unpaid.structuredContent);
    const paid: Result = await client.callTool({ name: shop.slug, arguments: {}, _meta: { "x402/payment": payload } });
    expect(paid.isError).toBe(true);
    expect(paid.content[0].text).toContain("503");
    expect(paid._meta?.["x402/payment-response"]).toBeUndefined();
    expect(await balanceOf(shop.merchant)).toBe(0n);
    const { transactions } = await history(shop);
    expect(transactions).toMatchObject([{ status: "FAILED" }]);
  }, 60_000);

  it("a payment for another tool's terms is refused with a fresh PaymentRequired, nothing forwarded", async () => {
    const cheap = await openShop({ price: "1", paywall: GET_ONLY });
    const dear = await openShop({ price: "5000", paywall: GET_ONLY });
    const cheapClient = await connect(cheap);
    const unpaid = await requiredFor(cheapClient, cheap, {});
    const payload = await buyer().client.createPaymentPayload(unpaid.structuredContent);
    const client = await connect(dear);
    const refused: Result = await client.callTool({ name: dear.slug, arguments: {}, _meta: { "x402/payment": payload } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ x402Version: 2, accepts: [{ amount: "5000" }] });
    expect(await upstreamRequests(dear.prefix)).toHaveLength(0);
    expect(await balanceOf(dear.merchant)).toBe(0n);
  }, 60_000);
});

describe("free tools", () => {
  it("a free route's tool forwards its arguments as the query, without payment", async () => {
    const shop = await openShop({ price: "1000", paywall: GET_ONLY });
    const patched = await api(`/v1/services/${shop.serviceId}`, {
      key: shop.actor.key,
      method: "PATCH",
      body: { publicRoutes: ["/free/echo"] },
    });
    expect(patched.status, patched.text).toBe(200);
    const client = await connect(shop);
    const result: Result = await client.callTool({ name: "FREE_free_echo", arguments: { q: "hello" } });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(result.content[0].text)).toMatchObject({ method: "GET", query: "q=hello" });
    expect(await upstreamRequests(`${shop.prefix}/free/echo`)).toHaveLength(1);
  }, 60_000);
});
