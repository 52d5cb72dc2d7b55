import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import type { NetworkEntry } from "../money/network-table.ts";
import type { NetworkId } from "../money/networks.ts";
import { usdcDecimal } from "../money/usdc.ts";
import { paymentUrls } from "../payments.ts";

/**
 * What a service offers agents, operation by operation: the one reading of a service's configuration that its
 * discovery document, its llms.txt and its diagnostics are all made from, so they never disagree with each other or
 * with the gateway (which answers the same paths from the same rows). See docs/discovery.md.
 */

/** The payment gateway's methods, in the order operations are listed. */
export const OPERATION_METHODS = ["GET", "POST", "PUT", "PATCH"] as const;
export type OperationMethod = (typeof OPERATION_METHODS)[number];
export const BODY_METHODS: readonly string[] = ["POST", "PUT", "PATCH"];

/** Most paid operations one service's document lists (in paywall creation order); the rest are counted as omitted. */
export const MAX_SERVICE_OPERATIONS = 100;
/** Most paid operations the payment origin's root catalogue (`/openapi.json`) lists, over every service. */
export const MAX_CATALOGUE_OPERATIONS = 40;
/** Most services the root `/llms.txt` lists. */
export const MAX_CATALOGUE_SERVICES = 100;
/** The `info.x-guidance` length agents' validators accept without a warning. */
export const MAX_GUIDANCE_CHARS = 4000;

export type Protocol = "x402" | "mpp";

/** The tenant's wallets: x402 pays the paywall's `merchantWallet`, MPP the Tempo wallet (else the primary one). */
export interface PayeeWallets {
  walletAddress: string;
  tempoWalletAddress: string | null;
}

export interface PaidOperation {
  kind: "paid";
  protocol: Protocol;
  method: OperationMethod;
  /** The full path on the payment origin (the document's key). */
  path: string;
  url: string;
  paywall: PaywallRow;
  /** The paywall's networks this protocol pays on (x402: EVM networks; MPP: Tempo). */
  networks: { id: NetworkId; entry: NetworkEntry }[];
  /** The price in decimal USD (USDC has 6 decimals; 1 USDC is priced as 1 USD). */
  priceUsd: string;
  /** Who the 402 names as payee (as the gateway's flows decide it). */
  payTo: string;
}

/** A free (`publicRoutes`) or wallet sign-in (`siwxRoutes`) route: GET only, forwarded to the service's upstream. */
export interface AccessOperation {
  kind: "free" | "siwx";
  method: "GET";
  /** The route on the service's `baseUrl`. */
  route: string;
  path: string;
  url: string;
}

export type Operation = PaidOperation | AccessOperation;

const origin = (paymentBaseUrl: string) => new URL(paymentBaseUrl).origin;
const enc = encodeURIComponent;

/** Where a service's discovery files are served, on the payment origin. */
export function discoveryPaths(serviceId: string) {
  return {
    openapi: `/api/discovery/${enc(serviceId)}/openapi.json`,
    llmsTxt: `/api/discovery/${enc(serviceId)}/llms.txt`,
    mcp: `/api/mcp/${enc(serviceId)}`,
  };
}

/**
 * A service's discovery URLs (absolute), as the API returns them: its OpenAPI document, its llms.txt — the
 * tenant's own (`docsLlms`) when set, else the one generated here — and its MCP endpoint (docs/mcp.md).
 */
export function discoveryUrls(paymentBaseUrl: string, service: Pick<ServiceRow, "id" | "docsLlms">) {
  const paths = discoveryPaths(service.id);
  const base = origin(paymentBaseUrl);
  return {
    openapiUrl: `${base}${paths.openapi}`,
    llmsTxtUrl: service.docsLlms ?? `${base}${paths.llmsTxt}`,
    mcpUrl: `${base}${paths.mcp}`,
  };
}

/** The payment-origin path of a service's free or SIWX route. */
export const accessPath = (kind: "free" | "siwx", serviceId: string, route: string) =>
  `/api/${kind === "free" ? "public" : "siwx"}/${enc(serviceId)}${route}`;

/** Oldest first: a paywall keeps its place in the document as others are added. */
export const creationOrder = (a: PaywallRow, b: PaywallRow) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The networks of a paywall each protocol pays on, as the gateway decides it (`resolveTarget`, the two flows). */
export function protocolNetworks(paywall: Pick<PaywallRow, "networks">, table: Record<NetworkId, NetworkEntry>) {
  const of = (kind: NetworkEntry["kind"]) =>
    (paywall.networks as NetworkId[]).filter((id) => table[id]?.kind === kind).map((id) => ({ id, entry: table[id] }));
  // MPP charges on the first Tempo network (src/gateway/mpp/charge.ts).
  return { x402: of("evm"), mpp: of("tempo").slice(0, 1) };
}

/** The paid operations of one enabled paywall of a service: each allowed method, x402 then MPP. */
export function paywallOperations(
  paymentBaseUrl: string,
  paywall: PaywallRow,
  table: Record<NetworkId, NetworkEntry>,
  wallets: PayeeWallets,
): PaidOperation[] {
  if (!paywall.enabled || !paywall.serviceId) return [];
  const urls = paymentUrls(origin(paymentBaseUrl), paywall.serviceId, paywall.slug, paywall.networks);
  const networks = protocolNetworks(paywall, table);
  const priceUsd = usdcDecimal(paywall.price);
  const out: PaidOperation[] = [];
  for (const method of OPERATION_METHODS) {
    if (!paywall.allowedMethods.includes(method)) continue;
    for (const protocol of ["x402", "mpp"] as const) {
      const url = urls[protocol];
      if (!url || networks[protocol].length === 0) continue;
      const payTo = protocol === "x402" ? paywall.merchantWallet : (wallets.tempoWalletAddress ?? wallets.walletAddress);
      out.push({
        kind: "paid",
        protocol,
        method,
        path: new URL(url).pathname,
        url,
        paywall,
        networks: networks[protocol],
        priceUsd,
        payTo,
      });
    }
  }
  return out;
}

export interface ServiceOperations {
  operations: Operation[];
  /** Paid operations left out past MAX_SERVICE_OPERATIONS. */
  omitted: number;
}

/** Every operation of a service: its enabled paywalls' (oldest first, bounded), then its free and SIWX routes. */
export function serviceOperations(
  paymentBaseUrl: string,
  service: ServiceRow,
  paywalls: readonly PaywallRow[],
  table: Record<NetworkId, NetworkEntry>,
  wallets: PayeeWallets,
): ServiceOperations {
  const paid = [...paywalls].sort(creationOrder).flatMap((p) => paywallOperations(paymentBaseUrl, p, table, wallets));
  const base = origin(paymentBaseUrl);
  const access = (kind: "free" | "siwx", routes: readonly string[]): AccessOperation[] =>
    routes.map((route) => {
      const path = accessPath(kind, service.id, route);
      return { kind, method: "GET", route, path, url: `${base}${path}` };
    });
  return {
    operations: [
      ...paid.slice(0, MAX_SERVICE_OPERATIONS),
      ...access("free", service.publicRoutes),
      ...access("siwx", service.siwxRoutes),
    ],
    omitted: Math.max(0, paid.length - MAX_SERVICE_OPERATIONS),
  };
}
