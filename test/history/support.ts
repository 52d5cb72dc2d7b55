import { insertPaywallWithinCap } from "../../src/db/paywalls.ts";
import type { PaywallRow, Tenant } from "../../src/db/schema.ts";
import { insertServiceWithinCap } from "../../src/db/services.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";
import { db, paywallRow, serviceRow } from "../support/factories.ts";

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
