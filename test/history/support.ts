import { exports } from "cloudflare:workers";
import { insertPaywallWithinCap } from "../../src/db/paywalls.ts";
import type { PaywallRow, Tenant } from "../../src/db/schema.ts";
import { insertServiceWithinCap } from "../../src/db/services.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";
import { db } from "../support/factories.ts";

/** The gateway's view of this Worker: the `Ingest` entrypoint, called over RPC as a service binding would. */
export const ingest = () => exports.Ingest;

export const recordId = (prefix: string) => `${prefix}_${randomHex(10)}`;
export const txHash = () => `0x${randomHex(32)}`;
export const address = () => `0x${randomHex(20)}`;

/** A service and a paywall of the tenant, written directly (the resource API has its own tests). */
export async function createPaywallFor(tenant: Tenant, networks = ["base-sepolia", "tempo-testnet"]): Promise<PaywallRow> {
  const now = new Date();
  const service = await insertServiceWithinCap(
    db(),
    {
      id: newId("svc"),
      tenantId: tenant.id,
      name: "S",
      baseUrl: "https://api.example.com",
      authMethod: "none",
      authConfig: {},
      networks,
      mode: "testnet",
      categories: [],
      publicRoutes: [],
      siwxRoutes: [],
      createdAt: now,
      updatedAt: now,
    },
    1000,
  );
  const outcome = await insertPaywallWithinCap(
    db(),
    {
      id: newId("pw"),
      tenantId: tenant.id,
      serviceId: service!.id,
      slug: `p-${randomHex(4)}`,
      name: "Paid route",
      targetType: "ROUTE",
      targetRoute: "/paid",
      price: "1000",
      currency: "USDC",
      networks,
      merchantWallet: tenant.walletAddress,
      timeout: 60_000,
      allowedMethods: ["GET"],
      allowedHeaders: [],
      fulfillmentMode: "PROXY",
      enabled: true,
      createdAt: now,
      updatedAt: now,
    },
    1000,
  );
  if (!("row" in outcome)) throw new Error(`paywall not created: ${outcome.refused}`);
  return outcome.row;
}
