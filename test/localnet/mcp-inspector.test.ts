// A service's MCP server as `@modelcontextprotocol/inspector-cli` sees it (docs/mcp.md): the production bundle in
// Miniflare on a real socket, the inspector's own process listing the tools with their schemas over Streamable HTTP.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorker, startWorker } from "../browser/support/worker.ts";
import { workerApi } from "./bundle-support.ts";

const PORT = 8806;
const INSPECTOR = join(import.meta.dirname, "../../node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
const INPUT = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

let worker: RunningWorker;
const api = workerApi(() => worker);
let mcpUrl: string;

beforeAll(async () => {
  worker = await startWorker({ port: PORT });
  const service = await api("/v1/services", {
    method: "POST",
    body: {
      name: "Inspected",
      baseUrl: "https://api.example.com",
      authMethod: "none",
      authConfig: {},
      networks: ["base-sepolia"],
      mode: "testnet",
      publicRoutes: ["/status"],
    },
  });
  expect(service.status).toBe(201);
  const paywall = await api("/v1/paywalls", {
    method: "POST",
    body: {
      slug: "forecast",
      name: "Forecast",
      targetType: "ROUTE",
      targetRoute: "/forecast",
      serviceId: service.body.data.id,
      price: "10000",
      currency: "USDC",
      networks: ["base-sepolia"],
      allowedMethods: ["GET"],
      fulfillmentMode: "PROXY",
      inputSchema: INPUT,
    },
  });
  expect(paywall.status).toBe(201);
  mcpUrl = (service.body.data.discovery as { mcpUrl: string }).mcpUrl;
}, 240_000);

afterAll(async () => {
  await worker?.stop();
});

describe("the MCP inspector's CLI", () => {
  it("lists the service's tools with their input schemas and payment terms", async () => {
    expect(mcpUrl).toBe(`${worker.paymentUrl}/api/mcp/${new URL(mcpUrl).pathname.split("/").at(-1)}`);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [INSPECTOR, mcpUrl, "--transport", "http", "--method", "tools/list"],
      {
        timeout: 60_000,
        // The CLI looks for its package.json relative to the working directory (fs.existsSync("../package.json"))
        // and imports it relative to itself: run it from its build folder, where both agree.
        cwd: join(INSPECTOR, ".."),
      },
    );
    const { tools } = JSON.parse(stdout) as {
      tools: { name: string; description: string; inputSchema: unknown; _meta?: Record<string, unknown> }[];
    };
    expect(tools.map((t) => t.name)).toEqual(["forecast", "FREE_status"]);
    expect(tools[0]).toMatchObject({ inputSchema: INPUT, _meta: { "x-payment-info": { price: { amount: "0.01" } } } });
    expect(tools[0]?.description).toContain("0.01 USD per call, paid over x402");
  });
});
