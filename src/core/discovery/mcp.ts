import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import type { NetworkEntry } from "../money/network-table.ts";
import type { NetworkId } from "../money/networks.ts";
import { networksText, paymentInfo } from "./document.ts";
import { embeddable, FORWARDED_QUERY_SCHEMA, type JsonSchema } from "./json-schema.ts";
import {
  BODY_METHODS,
  creationOrder,
  type OperationMethod,
  type PaidOperation,
  type PayeeWallets,
  paywallOperations,
  serviceOperations,
} from "./operations.ts";

/**
 * A service's MCP tools (docs/mcp.md): one per enabled paywall and method, one per free route, built on every request
 * from the same operations as its discovery document and llms.txt, so a disabled paywall or a new price shows at
 * once. Pure: the gateway's MCP endpoint (src/gateway/mcp/) serves them.
 */

/** Most tools one service lists (paid tools in paywall creation order, then free ones). */
export const MAX_SERVICE_TOOLS = 100;

/** A tool as MCP's `tools/list` describes it. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: "object" };
  outputSchema?: JsonSchema & { type: "object" };
  annotations: { title: string; readOnlyHint: boolean; idempotentHint: boolean; openWorldHint: true };
  _meta?: Record<string, unknown>;
}

/** What calling a tool reaches: a paid route (each protocol's operation) or a free route. */
export type ToolTarget =
  | { kind: "paid"; method: OperationMethod; paywall: PaywallRow; operations: PaidOperation[] }
  | { kind: "free"; method: "GET"; route: string; url: string };

export interface ServiceTool {
  tool: McpTool;
  target: ToolTarget;
}

/** The `_meta` key of a paid tool's payment terms: the discovery document's `x-payment-info`, both protocols. */
export const PAYMENT_TERMS_META = "x-payment-info";
/** The `_meta` key of a paid tool's output schema, as the paywall declares it. */
export const OUTPUT_SCHEMA_META = "x-output-schema";

/** The arguments of a body method without an input schema: a JSON object, sent as the body. */
const JSON_BODY_SCHEMA = {
  type: "object",
  description: "The JSON body sent to the service, as given",
} as const satisfies JsonSchema;

/** A tool's name: letters, digits, `_`, `-` and `.`, at most 128 characters (MCP's rule). */
const toolNameOf = (text: string) => text.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 128);

/**
 * A paid tool's name: the paywall's slug, with `_` and the method in capitals when the paywall allows several
 * (`forecast_GET`, `forecast_POST`). Slugs are lowercase, so the suffixed names never meet another slug.
 */
export const paidToolName = (slug: string, method: OperationMethod, several: boolean) => (several ? `${slug}_${method}` : slug);

/** A free route's tool name: `FREE` and the route (`/v1/status` → `FREE_v1_status`); capitals, so never a slug. */
export const freeToolName = (route: string) => toolNameOf(`FREE${route.replace(/\//g, "_")}`);

/** The tool's input: the paywall's input schema, else the query (GET) or a JSON object body (the other methods). */
function inputSchemaOf(paywall: PaywallRow, method: OperationMethod): McpTool["inputSchema"] {
  const schema = paywall.inputSchema ? embeddable(paywall.inputSchema as JsonSchema) : undefined;
  if (schema && schema.type === "object") return schema as McpTool["inputSchema"];
  return BODY_METHODS.includes(method) ? { ...JSON_BODY_SCHEMA } : { ...(FORWARDED_QUERY_SCHEMA as { type: "object" }) };
}

/**
 * MCP's `outputSchema` describes structured content, an object: only an output schema whose root is one. The paywall's
 * output schema is also in `_meta["x-output-schema"]`, whatever its root.
 */
function outputSchemaOf(paywall: PaywallRow): McpTool["outputSchema"] {
  const schema = paywall.outputSchema ? embeddable(paywall.outputSchema as JsonSchema) : undefined;
  return schema?.type === "object" ? (schema as McpTool["outputSchema"]) : undefined;
}

const LABEL = { x402: "x402", mpp: "MPP" } as const;

function paidTool(name: string, method: OperationMethod, paywall: PaywallRow, operations: PaidOperation[]): McpTool {
  const [first] = operations as [PaidOperation];
  const ways = operations.map((op) => `${LABEL[op.protocol]} (${networksText(op)})`).join(" or ");
  const terms = `${first.priceUsd} USD per call, paid over ${ways}.`;
  const title = `${paywall.name} (${method}, ${first.priceUsd} USD)`;
  const infos = operations.map(paymentInfo);
  const offers = infos.flatMap((info) => ("offers" in info ? info.offers : []));
  // x402's unpaid answer is a tool error whose structured content is its PaymentRequired, which an output schema
  // would have to describe: only a tool paid without x402 declares one (docs/mcp.md).
  const outputSchema = operations.some((op) => op.protocol === "x402") ? undefined : outputSchemaOf(paywall);
  return {
    name,
    title,
    description: paywall.description ? `${paywall.description}\n\n${terms}` : terms,
    inputSchema: inputSchemaOf(paywall, method),
    ...(outputSchema ? { outputSchema } : {}),
    annotations: { title, readOnlyHint: method === "GET", idempotentHint: false, openWorldHint: true },
    _meta: {
      ...(paywall.outputSchema ? { [OUTPUT_SCHEMA_META]: embeddable(paywall.outputSchema as JsonSchema) } : {}),
      [PAYMENT_TERMS_META]: {
        price: infos[0]?.price,
        protocols: infos.flatMap((info): unknown[] => info.protocols),
        ...(offers.length > 0 ? { offers } : {}),
      },
    },
  };
}

function freeTool(route: string): McpTool {
  const title = `Free: GET ${route}`;
  return {
    name: freeToolName(route),
    title,
    description: "No payment: the service's free route, called with the given query parameters.",
    inputSchema: { ...(FORWARDED_QUERY_SCHEMA as { type: "object" }) },
    annotations: { title, readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  };
}

export interface ServiceToolsInput {
  paymentBaseUrl: string;
  table: Record<NetworkId, NetworkEntry>;
  service: ServiceRow;
  paywalls: readonly PaywallRow[];
  wallets: PayeeWallets;
}

/** A service's tools: its enabled paywalls' (oldest first), then its free routes; at most MAX_SERVICE_TOOLS. */
export function serviceTools({ paymentBaseUrl, table, service, paywalls, wallets }: ServiceToolsInput): ServiceTool[] {
  const out: ServiceTool[] = [];
  const names = new Set<string>();
  const add = (entry: ServiceTool) => {
    if (out.length >= MAX_SERVICE_TOOLS || names.has(entry.tool.name)) return;
    names.add(entry.tool.name);
    out.push(entry);
  };
  for (const paywall of [...paywalls].sort(creationOrder)) {
    const byMethod = Map.groupBy(paywallOperations(paymentBaseUrl, paywall, table, wallets), (op) => op.method);
    for (const [method, operations] of byMethod) {
      const name = paidToolName(paywall.slug, method, byMethod.size > 1);
      add({ tool: paidTool(name, method, paywall, operations), target: { kind: "paid", method, paywall, operations } });
    }
  }
  const free = serviceOperations(paymentBaseUrl, service, [], table, wallets).operations;
  for (const op of free) {
    if (op.kind !== "free") continue;
    add({ tool: freeTool(op.route), target: { kind: "free", method: "GET", route: op.route, url: op.url } });
  }
  return out;
}
