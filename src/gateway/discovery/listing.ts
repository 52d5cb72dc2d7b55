import { getDb } from "../../db/client.ts";
import { recordListing } from "../../db/discovery.ts";
import type { PaymentTarget } from "../../db/gateway.ts";

/**
 * A facilitator may say on settlement, in `EXTENSION-RESPONSES` (`@x402/core` reads it into the settle result's
 * `extensionResponses`), whether it catalogued the route from the 402's Bazaar extension: `{bazaar: {status:
 * "success" | "processing" | "rejected", rejectedReason?}}`. Recorded per paywall (the latest wins) for the tenant's
 * discovery preview; never shown to buyers, and never in the way of the payment (written after, failures ignored).
 */
export function noteListing(
  env: Env,
  defer: (work: Promise<unknown>) => void,
  target: PaymentTarget,
  facilitatorUrl: string,
  result: { extensionResponses?: Record<string, unknown> },
): void {
  const bazaar = result.extensionResponses?.bazaar as { status?: unknown; rejectedReason?: unknown } | undefined;
  if (!bazaar || typeof bazaar.status !== "string") return;
  const reason = typeof bazaar.rejectedReason === "string" ? bazaar.rejectedReason.slice(0, 500) : null;
  const write = recordListing(getDb(env.DB), {
    paywallId: target.paywall.id,
    tenantId: target.paywall.tenantId,
    status: bazaar.status.slice(0, 32),
    reason,
    facilitatorUrl,
    updatedAt: new Date(),
  }).catch(() => {});
  defer(write);
}
