import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import { inertMarkdown } from "../../lib/markdown-text.ts";
import { caip2, type NetworkEntry } from "../money/network-table.ts";
import type { NetworkId } from "../money/networks.ts";
import { outputExampleOf, sessionsText, sessionTermsOf } from "./bazaar.ts";
import { embeddable, FORWARDED_QUERY_SCHEMA, type JsonSchema } from "./json-schema.ts";
import {
  type AccessOperation,
  BODY_METHODS,
  discoveryUrls,
  MAX_CATALOGUE_OPERATIONS,
  type Operation,
  type PaidOperation,
  type PayeeWallets,
  paywallOperations,
  serviceOperations,
} from "./operations.ts";

/**
 * Discovery documents (docs/discovery.md): OpenAPI 3.1 in the profile x402scan and @agentcash/discovery read
 * (`info.x-guidance`, `security: []` on free and paid operations, a `siwx` security scheme, `x-payment-info` on paid
 * operations) with MPP's payment-discovery fields (`x-payment-info.offers`, `x-service-info`). Built from the rows on
 * every request: what a document says is what the gateway answers.
 *
 * Keys of `paths` are full paths on the payment origin and `servers[0].url` is the origin alone: validators join the
 * two, and a path in `servers` would make some of them look for every operation in the wrong place.
 */

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is open-ended JSON
export type OpenApiDocument = Record<string, any>;

const PROTOCOL_LABEL = { x402: "x402", mpp: "MPP" } as const;

/** How the paid networks of an operation read in its description: `USDC on base-sepolia`. */
export function networksText(op: PaidOperation): string {
  const byToken = Map.groupBy(op.networks, (n) => n.entry.token);
  return [...byToken].map(([token, list]) => `${token} on ${list.map((n) => n.id).join(", ")}`).join("; ");
}

/** An operation's `x-payment-info` (its price and how each protocol pays it); MCP tools carry the same terms. */
export function paymentInfo(op: PaidOperation) {
  const price = { mode: "fixed", currency: "USD", amount: op.priceUsd };
  if (op.protocol === "x402") {
    const sessions = sessionTermsOf(op.paywall);
    return {
      price,
      protocols: [{ x402: { scheme: "exact", networks: op.networks.map((n) => caip2(n.entry)), payTo: op.payTo } }],
      // Sessions (docs/sessions.md): a deposit of at least `minDeposit` atomic units opens a channel paid per call by
      // vouchers; per-call payments stay accepted.
      ...(sessions ? { sessions } : {}),
    };
  }
  return {
    price,
    protocols: op.networks.map((n) => ({ mpp: { method: "tempo", intent: "charge", currency: n.entry.asset } })),
    // MPP's offers: the amount in the token's atomic units (6 decimals), as its 402 asks for it.
    offers: op.networks.map((n) => ({
      intent: "charge",
      method: "tempo",
      amount: op.paywall.price,
      currency: n.entry.asset,
      recipient: op.payTo,
      description: `${op.priceUsd} USD per call in ${n.entry.token} on ${n.id}`,
    })),
  };
}

/** Without an input schema (or one naming no property), a GET declares the query it forwards, whatever it holds. */
const FORWARDED_QUERY = {
  parameters: [{ in: "query", name: "query", style: "form", explode: true, schema: FORWARDED_QUERY_SCHEMA }],
};

/** The request's input: query parameters (GET) from the input schema's properties, or its JSON body. */
function inputOf(op: PaidOperation) {
  const schema = op.paywall.inputSchema ? embeddable(op.paywall.inputSchema as JsonSchema) : undefined;
  if (BODY_METHODS.includes(op.method)) {
    return { requestBody: { required: true, content: { "application/json": { schema: schema ?? { type: "object" } } } } };
  }
  if (!schema?.properties) return FORWARDED_QUERY;
  const required = new Set(schema.required ?? []);
  const parameters = Object.entries(schema.properties).map(([name, property]) => ({
    in: "query",
    name,
    ...(required.has(name) ? { required: true } : {}),
    ...(property.description ? { description: property.description } : {}),
    schema: property,
  }));
  return parameters.length > 0 ? { parameters } : FORWARDED_QUERY;
}

function paidOperationObject(op: PaidOperation, operationId: string) {
  const { paywall } = op;
  const terms = `${op.priceUsd} USD per call, paid over ${PROTOCOL_LABEL[op.protocol]} in ${networksText(op)}.${sessionsText(op)}`;
  return {
    operationId,
    summary: `${paywall.name} (${PROTOCOL_LABEL[op.protocol]}, ${op.priceUsd} USD)`,
    description: paywall.description ? `${inertMarkdown(paywall.description)}\n\n${terms}` : terms,
    tags: [op.protocol],
    security: [],
    ...inputOf(op),
    "x-payment-info": paymentInfo(op),
    responses: {
      "200": {
        description: "The upstream's answer, once paid",
        content: {
          "application/json": {
            schema: paywall.outputSchema ? embeddable(paywall.outputSchema as JsonSchema) : {},
            example: outputExampleOf(paywall),
          },
        },
      },
      "402": {
        description:
          op.protocol === "x402"
            ? "Payment Required: the x402 challenge in the PAYMENT-REQUIRED header (with the Bazaar extension)"
            : "Payment Required: the MPP challenge in WWW-Authenticate: Payment",
      },
    },
  };
}

function accessOperationObject(op: AccessOperation) {
  if (op.kind === "free") {
    return {
      operationId: `free-get${op.route}`,
      summary: `Free: GET ${op.route}`,
      description: "No payment and no sign-in: the gateway forwards the request to the service.",
      tags: ["free"],
      security: [],
      responses: { "200": { description: "The upstream's answer" } },
    };
  }
  return {
    operationId: `siwx-get${op.route}`,
    summary: `Wallet sign-in: GET ${op.route}`,
    description:
      "Sign-In-With-X (CAIP-122): the first request answers 402 with a `sign-in-with-x` challenge; sign it with your wallet and " +
      "repeat the request with the SIGN-IN-WITH-X header. No payment. The service receives your verified address.",
    tags: ["siwx"],
    security: [{ siwx: [] }],
    responses: {
      "200": { description: "The upstream's answer" },
      "402": { description: "The SIGN-IN-WITH-X challenge: PAYMENT-REQUIRED with accepts [] and extensions.sign-in-with-x" },
    },
  };
}

const SIWX_SCHEME = {
  siwx: {
    type: "apiKey",
    in: "header",
    name: "SIGN-IN-WITH-X",
    description: "CAIP-122 wallet sign-in (the x402 sign-in-with-x extension): base64 JSON of the signed challenge",
    "x-agentcash-auth-kind": "siwx",
  },
};

function pathsOf(operations: Operation[], operationId: (op: PaidOperation) => string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const item = paths[op.path] ?? {};
    paths[op.path] = item;
    item[op.method.toLowerCase()] = op.kind === "paid" ? paidOperationObject(op, operationId(op)) : accessOperationObject(op);
  }
  return paths;
}

export interface ServiceDocumentInput {
  paymentBaseUrl: string;
  table: Record<NetworkId, NetworkEntry>;
  service: ServiceRow;
  paywalls: readonly PaywallRow[];
  wallets: PayeeWallets;
}

/** A service's discovery document: its enabled paywalls' operations, its free and SIWX routes, its details. */
export function serviceDocument({ paymentBaseUrl, table, service, paywalls, wallets }: ServiceDocumentInput): OpenApiDocument {
  const { operations } = serviceOperations(paymentBaseUrl, service, paywalls, table, wallets);
  const urls = discoveryUrls(paymentBaseUrl, service);
  const docs = {
    ...(service.docsHomepage ? { homepage: service.docsHomepage } : {}),
    ...(service.docsApiReference ? { apiReference: service.docsApiReference } : {}),
    llms: urls.llmsTxtUrl,
    mcp: urls.mcpUrl,
  };
  return {
    openapi: "3.1.0",
    info: {
      title: service.name,
      version: String(service.version),
      // Descriptions are CommonMark: the tenant's text is made inert there (no HTML, no link but http(s)).
      description: inertMarkdown(service.description ?? `Paid API routes of ${service.name}, paid per call in USDC.`),
      ...(service.contactEmail ? { contact: { email: service.contactEmail } } : {}),
      ...(service.xGuidance ? { "x-guidance": inertMarkdown(service.xGuidance) } : {}),
    },
    servers: [{ url: new URL(paymentBaseUrl).origin }],
    "x-service-info": { ...(service.categories.length > 0 ? { categories: service.categories } : {}), docs },
    "x-agentcash-guidance": { llmsTxtUrl: urls.llmsTxtUrl },
    ...(service.siwxRoutes.length > 0 ? { components: { securitySchemes: SIWX_SCHEME } } : {}),
    paths: pathsOf(operations, (op) => `${op.protocol}-${op.method.toLowerCase()}-${op.paywall.slug}`),
  };
}

export interface CatalogueInput {
  paymentBaseUrl: string;
  table: Record<NetworkId, NetworkEntry>;
  /** Services with their enabled paywalls, in catalogue order (oldest service first). */
  services: readonly { service: ServiceRow; paywalls: readonly PaywallRow[]; wallets: PayeeWallets }[];
}

/**
 * The payment origin's root document (`/openapi.json`), the only one crawlers read: the enabled paid operations of
 * every service, oldest first, at most MAX_CATALOGUE_OPERATIONS of them. Each service's own document lists all of
 * its operations with its contact and guidance.
 */
export function catalogueDocument({ paymentBaseUrl, table, services }: CatalogueInput): OpenApiDocument {
  const operations: PaidOperation[] = [];
  for (const { paywalls, wallets } of services) {
    for (const paywall of paywalls) operations.push(...paywallOperations(paymentBaseUrl, paywall, table, wallets));
  }
  const origin = new URL(paymentBaseUrl).origin;
  const listed = operations.slice(0, MAX_CATALOGUE_OPERATIONS);
  const names = new Map(services.map(({ service }) => [service.id, service.name]));
  return {
    openapi: "3.1.0",
    info: {
      title: `Paid APIs at ${new URL(paymentBaseUrl).host}`,
      version: "1",
      description:
        "Paid routes of the services sold through this payment gateway, paid per call in USDC over x402 or MPP. " +
        `Lists at most ${MAX_CATALOGUE_OPERATIONS} operations, oldest first; each service's own document lists all of its routes.`,
      "x-guidance":
        "Call a route: it answers 402 Payment Required with the terms (x402: the PAYMENT-REQUIRED header; MPP: " +
        "WWW-Authenticate: Payment). Pay and repeat the request with PAYMENT-SIGNATURE (x402) or Authorization: Payment (MPP). " +
        `Each service's full document is at ${origin}/api/discovery/{serviceId}/openapi.json, and ${origin}/llms.txt lists them.`,
    },
    servers: [{ url: origin }],
    "x-service-info": { docs: { llms: `${origin}/llms.txt` } },
    paths: pathsOf(listed, (op) => `${op.paywall.serviceId}-${op.protocol}-${op.method.toLowerCase()}-${op.paywall.slug}`),
    tags: [...new Set(listed.map((op) => op.protocol))].map((name) => ({ name })),
    "x-services": [...new Set(listed.map((op) => op.paywall.serviceId as string))].map((id) => ({
      id,
      name: names.get(id),
      openapi: `${origin}/api/discovery/${encodeURIComponent(id)}/openapi.json`,
    })),
  };
}
