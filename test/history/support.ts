import { exports } from "cloudflare:workers";
import { insertPaywallWithinCap } from "../../src/db/paywalls.ts";
import type { PaywallRow, Tenant } from "../../src/db/schema.ts";
import { insertServiceWithinCap } from "../../src/db/services.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";
import { db, paywallRow, serviceRow } from "../support/factories.ts";

/** The gateway's view of this Worker: the `Ingest` entrypoint, called over RPC as a service binding would. */
export const ingest = () => exports.Ingest;

export const recordId = (prefix: string) => `${prefix}_${randomHex(10)}`;
export const txHash = () => `0x${randomHex(32)}`;
export const address = () => `0x${randomHex(20)}`;

/** A service and a paywall of the tenant, written directly (the resource API has its own tests). */
export async function createPaywallFor(tenant: Tenant, networks = ["base-sepolia", "tempo-testnet"]): Promise<PaywallRow> {
  const service = await insertServiceWithinCap(db(), serviceRow(tenant.id, newId("svc"), { name: "S", networks }), 1000);
  const outcome = await insertPaywallWithinCap(
    db(),
    paywallRow(tenant, newId("pw"), {
      serviceId: service!.id,
      slug: `p-${randomHex(4)}`,
      name: "Paid route",
      targetType: "ROUTE",
      targetUrl: null,
      targetRoute: "/paid",
      price: "1000",
      networks,
    }),
    1000,
  );
  if (!("row" in outcome)) throw new Error(`paywall not created: ${outcome.refused}`);
  return outcome.row;
}
