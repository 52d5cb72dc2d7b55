import type { Config } from "../../../core/config.ts";
import { commonMode, type NetworkId } from "../../../core/money/networks.ts";
import { usdcDecimal } from "../../../core/money/usdc.ts";
import { paymentUrls, VALIDITY_WINDOW_SECONDS } from "../../../core/payments.ts";
import { MASK } from "../../../core/secrets/secret-box.ts";
import type { PaywallRow } from "../../../db/schema.ts";
import { normalizeRoute } from "../../../lib/route-pattern.ts";
import type { Paywall } from "./schemas.ts";

/** The response form of a paywall: header values masked, derived fields filled in. */
export function toPaywall(row: PaywallRow, config: Config): Paywall {
  const networks = row.networks as NetworkId[];
  const mode = commonMode(networks) ?? "testnet";
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    targetType: row.targetType,
    targetUrl: row.targetUrl,
    targetRoute: row.targetRoute,
    routePattern: row.targetType === "ROUTE" && row.targetRoute ? normalizeRoute(row.targetRoute) : null,
    price: row.price,
    priceUsdc: usdcDecimal(row.price),
    currency: row.currency,
    network: networks[0] as NetworkId,
    networks,
    merchantWallet: row.merchantWallet,
    facilitatorUrl: config.facilitatorUrl[mode],
    timeout: row.timeout,
    validityWindow: VALIDITY_WINDOW_SECONDS,
    allowedMethods: row.allowedMethods as Paywall["allowedMethods"],
    allowedHeaders: row.allowedHeaders,
    fulfillmentMode: row.fulfillmentMode,
    enabled: row.enabled,
    sessions: {
      enabled: row.sessionsEnabled,
      ...(row.sessionsMinDeposit === null ? {} : { minDeposit: row.sessionsMinDeposit }),
    },
    headers: row.headers ? row.headers.map((h) => ({ key: h.key, value: MASK })) : null,
    queryParams: row.queryParams,
    cacheRules: row.cacheRules,
    inputSchema: row.inputSchema,
    outputSchema: row.outputSchema,
    outputExample: row.outputExample,
    serviceId: row.serviceId,
    // The specification names a resource's owner `userId`; the owner here is the tenant, so it holds the tenant id (`ten_…`).
    userId: row.tenantId,
    paymentUrls: paymentUrls(config.paymentBaseUrl, row.serviceId, row.slug, networks),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
