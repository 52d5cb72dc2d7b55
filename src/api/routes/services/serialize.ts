import type { Config } from "../../../core/config.ts";
import { discoveryUrls } from "../../../core/discovery/operations.ts";
import type { NetworkId } from "../../../core/money/networks.ts";
import { type AuthMethod, maskAuthConfig } from "../../../core/secrets/auth-config.ts";
import type { PaywallRow, ServiceRow } from "../../../db/schema.ts";
import { toPaywall } from "../paywalls/serialize.ts";
import type { Service } from "./schemas.ts";

/** The response form of a service: secrets masked, its paywalls embedded. */
export function toService(row: ServiceRow, paywalls: PaywallRow[], config: Config): Service {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    baseUrl: row.baseUrl,
    authMethod: row.authMethod as AuthMethod,
    authConfig: maskAuthConfig(row.authMethod, row.authConfig),
    networks: row.networks as NetworkId[],
    mode: row.mode,
    contactEmail: row.contactEmail,
    categories: row.categories,
    docsHomepage: row.docsHomepage,
    docsApiReference: row.docsApiReference,
    docsLlms: row.docsLlms,
    xGuidance: row.xGuidance,
    publicRoutes: row.publicRoutes,
    siwxRoutes: row.siwxRoutes,
    // The specification names a resource's owner `userId`; the owner here is the tenant, so it holds the tenant id (`ten_…`).
    userId: row.tenantId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    // `Paywall` in PascalCase, an array: the specification's own name for a service's paywalls (docs/api.md).
    Paywall: paywalls.map((p) => toPaywall(p, config)),
    discovery: discoveryUrls(config.paymentBaseUrl, row),
  };
}
