import { type RecordsMessage, storeRecord } from "../../core/ledger/payment-object.ts";
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
  const row = {
    paywallId: target.paywall.id,
    tenantId: target.paywall.tenantId,
    status: bazaar.status.slice(0, 32),
    reason,
    facilitatorUrl,
    updatedAt: new Date(),
  };
  // Payments recorded in their objects: the paid path writes nothing to D1, the listing goes with the payments'
  // records through their queue (src/core/ledger/records-queue.ts).
  const write =
    env.PAYMENT_RECORDS === "objects"
      ? env.PAYMENT_RECORDS_QUEUE.send({
          transactionId: target.paywall.id,
          seqs: [],
          records: [storeRecord({ kind: "listing", row })],
        } satisfies RecordsMessage)
      : recordListing(getDb(env.DB), row);
  defer(write.catch(() => {}));
}
