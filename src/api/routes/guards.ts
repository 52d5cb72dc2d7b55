import { forbidden } from "../../core/http/errors.ts";
import type { Db } from "../../db/client.ts";
import { findPaywall } from "../../db/paywalls.ts";
import { findService } from "../../db/services.ts";

export { assertOwned, assertSafeUpstream, assertVersionMatches, preconditionFailed } from "../../core/catalog/guards.ts";

/**
 * A history filter may name a deleted paywall or service (its records remain), but never another tenant's: 403.
 */
export async function assertFilterRefsOwned(
  db: Db,
  tenantId: string,
  refs: { paywallId?: string | undefined; serviceId?: string | undefined },
) {
  const [paywall, service] = await Promise.all([
    refs.paywallId ? findPaywall(db, refs.paywallId) : undefined,
    refs.serviceId ? findService(db, refs.serviceId) : undefined,
  ]);
  if (paywall && paywall.tenantId !== tenantId) throw forbidden("paywall");
  if (service && service.tenantId !== tenantId) throw forbidden("service");
}
