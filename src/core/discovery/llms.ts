import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import { inertMarkdown, quotedMarkdown } from "../../lib/markdown-text.ts";
import type { NetworkEntry } from "../money/network-table.ts";
import type { NetworkId } from "../money/networks.ts";
import { sessionsText } from "./bazaar.ts";
import { type AccessOperation, discoveryPaths, type PaidOperation, type PayeeWallets, serviceOperations } from "./operations.ts";

/**
 * llms.txt files (llmstxt.org: an H1, a one-line blockquote, free text, `##` sections of `- [name](url): note`
 * lines), served as text/plain: a service's (every paid route with its price and networks, how to pay, its free and
 * sign-in routes, its documents) and the payment origin's root one (the services). Built from the same operations as
 * the discovery documents. Tenant text never forms a line of the platform's: names and descriptions are kept on one
 * line inside the platform's, the service's guidance is a blockquote, and all of it is inert Markdown.
 */

/**
 * Tenant text on one line, without Markdown link brackets, at most `max` characters, inert (`inertMarkdown`: no
 * `javascript:`/`data:` URL, no HTML, no autolink).
 */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").replace(/[[\]]/g, "").trim();
  return inertMarkdown(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

const HOW_TO_PAY = [
  "## How to pay",
  "",
  "Each paid route answers `402 Payment Required` with its terms; the 402 is authoritative. Prices are per call, in USD, paid in a USD stablecoin with 6 decimals (1 USD = 1000000 atomic units).",
  "",
  "- x402 v2: decode the `PAYMENT-REQUIRED` header (base64 JSON), sign an EIP-3009 authorization for one of its `accepts`, and repeat the request with the `PAYMENT-SIGNATURE` header. The answer carries `PAYMENT-RESPONSE`.",
  "- MPP: read `WWW-Authenticate: Payment` (method `tempo`, intent `charge`), sign the Tempo transfer it asks for, and repeat the request with `Authorization: Payment <credential>`. The answer carries `Payment-Receipt`.",
  "",
];

function paidLine(op: PaidOperation): string {
  const networks = op.networks.map((n) => `${n.entry.token} on ${n.id}`).join(", ");
  const about = op.paywall.description ? ` ${oneLine(op.paywall.description, 300)}` : "";
  return `- [${op.method} ${oneLine(op.paywall.name, 100)} (${op.protocol === "x402" ? "x402" : "MPP"})](${op.url}): ${op.priceUsd} USD per call, ${networks}.${sessionsText(op)}${about}`;
}

export interface ServiceLlmsInput {
  paymentBaseUrl: string;
  table: Record<NetworkId, NetworkEntry>;
  service: ServiceRow;
  paywalls: readonly PaywallRow[];
  wallets: PayeeWallets;
}

export function serviceLlmsTxt({ paymentBaseUrl, table, service, paywalls, wallets }: ServiceLlmsInput): string {
  const origin = new URL(paymentBaseUrl).origin;
  const { operations, omitted } = serviceOperations(paymentBaseUrl, service, paywalls, table, wallets);
  const lines = [
    `# ${oneLine(service.name, 100)}`,
    "",
    `> ${oneLine(service.description ?? "A paid API: every route is paid per call.", 300)}`,
    "",
  ];
  // The tenant's guidance, fenced: a blockquote whose lines cannot read as the sections below (quotedMarkdown).
  if (service.xGuidance?.trim()) lines.push("The service's guidance for agents:", "", quotedMarkdown(service.xGuidance), "");
  lines.push(...HOW_TO_PAY, "## Paid routes", "");
  const paid = operations.filter((op): op is PaidOperation => op.kind === "paid");
  lines.push(...(paid.length > 0 ? paid.map(paidLine) : ["No paid route is enabled."]));
  if (omitted > 0) lines.push(`- …and ${omitted} more: see the OpenAPI document.`);
  const free = operations.filter((op): op is AccessOperation => op.kind === "free");
  if (free.length > 0) {
    lines.push("", "## Free routes", "", ...free.map((op) => `- [GET ${op.route}](${op.url}): no payment.`));
  }
  const siwx = operations.filter((op): op is AccessOperation => op.kind === "siwx");
  if (siwx.length > 0) {
    lines.push(
      "",
      "## Wallet sign-in routes",
      "",
      "No payment: the first request answers 402 with a `sign-in-with-x` challenge (CAIP-122) in `PAYMENT-REQUIRED`; sign it with your wallet and repeat the request with the `SIGN-IN-WITH-X` header. Each challenge is good for one request to its own route.",
      "",
      ...siwx.map((op) => `- [GET ${op.route}](${op.url}): wallet sign-in.`),
    );
  }
  lines.push(
    "",
    "## Docs",
    "",
    `- [OpenAPI discovery document](${origin}${discoveryPaths(service.id).openapi}): every route, its price and its input`,
    `- [MCP server](${origin}${discoveryPaths(service.id).mcp}): the same routes as MCP tools (Streamable HTTP), for MCP hosts`,
  );
  if (service.docsLlms) lines.push(`- [The service's own llms.txt](${service.docsLlms})`);
  if (service.docsHomepage) lines.push(`- [Documentation](${service.docsHomepage})`);
  if (service.docsApiReference) lines.push(`- [API reference](${service.docsApiReference})`);
  if (service.contactEmail) lines.push("", `Contact: ${service.contactEmail}`);
  return `${lines.join("\n")}\n`;
}

export interface CatalogueLlmsInput {
  paymentBaseUrl: string;
  /** Services that have an enabled paywall, oldest first, with how many paid routes each has enabled. */
  services: readonly { service: Pick<ServiceRow, "id" | "name" | "description">; paidRoutes: number }[];
}

/** The payment origin's root llms.txt: the services sold here, each with its own llms.txt and document. */
export function catalogueLlmsTxt({ paymentBaseUrl, services }: CatalogueLlmsInput): string {
  const origin = new URL(paymentBaseUrl).origin;
  const lines = [
    `# Paid APIs at ${new URL(paymentBaseUrl).host}`,
    "",
    "> Services sold per call through this payment gateway, paid in USDC over x402 or MPP.",
    "",
    ...HOW_TO_PAY,
    "## Services",
    "",
  ];
  if (services.length === 0) lines.push("No service has an enabled paid route yet.");
  for (const { service, paidRoutes } of services) {
    const about = service.description ? ` ${oneLine(service.description, 200)}` : "";
    const paths = discoveryPaths(service.id);
    lines.push(
      `- [${oneLine(service.name, 100)}](${origin}${paths.llmsTxt}): ${paidRoutes} paid route${paidRoutes === 1 ? "" : "s"}; OpenAPI: ${origin}${paths.openapi}.${about}`,
    );
  }
  lines.push("", "## Docs", "", `- [OpenAPI catalogue](${origin}/openapi.json): the paid routes of every service`);
  return `${lines.join("\n")}\n`;
}
