import type { Db } from "../../db/client.ts";
import { countPaywallsWithoutService, findListings } from "../../db/discovery.ts";
import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import { getConfig } from "../config.ts";
import { networkTable } from "../money/network-table.ts";
import { type Diagnostic, discoveryDiagnostics } from "./diagnostics.ts";
import { type OpenApiDocument, serviceDocument } from "./document.ts";
import { discoveryUrls, type PayeeWallets } from "./operations.ts";

export interface ListingStatus {
  paywallId: string;
  slug: string;
  status: string;
  reason: string | null;
  facilitatorUrl: string;
  updatedAt: Date;
}

export interface DiscoveryPreview {
  openapiUrl: string;
  llmsTxtUrl: string;
  /** The service's MCP server (docs/mcp.md). */
  mcpUrl: string;
  /** Exactly what the payment origin serves at `openapiUrl` right now. */
  document: OpenApiDocument;
  diagnostics: Diagnostic[];
  /** The last Bazaar listing status facilitators returned, per paywall that had one. */
  listings: ListingStatus[];
}

/** What agents see of a service, and what to improve: the API's `GET /v1/services/{id}/discovery` and the dashboard's page. */
export async function discoveryPreview(
  db: Db,
  env: object,
  service: ServiceRow,
  paywalls: readonly PaywallRow[],
  wallets: PayeeWallets,
): Promise<DiscoveryPreview> {
  const config = getConfig(env);
  const table = networkTable(env);
  const [paywallsWithoutService, listings] = await Promise.all([
    countPaywallsWithoutService(db, service.tenantId),
    findListings(
      db,
      paywalls.map((p) => p.id),
    ),
  ]);
  const input = { paymentBaseUrl: config.paymentBaseUrl, table, service, paywalls, wallets };
  const slugs = new Map(paywalls.map((p) => [p.id, p.slug]));
  return {
    ...discoveryUrls(config.paymentBaseUrl, service),
    document: serviceDocument(input),
    diagnostics: discoveryDiagnostics({ ...input, paywallsWithoutService, listings }),
    listings: listings.map((l) => ({
      paywallId: l.paywallId,
      slug: slugs.get(l.paywallId) ?? "",
      status: l.status,
      reason: l.reason,
      facilitatorUrl: l.facilitatorUrl,
      updatedAt: l.updatedAt,
    })),
  };
}
