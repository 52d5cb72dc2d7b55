import { ApiError, forbidden, notFound } from "../../core/http/errors.ts";
import type { Db } from "../../db/client.ts";
import { findPaywall } from "../../db/paywalls.ts";
import { findService } from "../../db/services.ts";
import { etagOf } from "../../lib/etag.ts";
import { checkUpstreamUrl } from "../../lib/ssrf.ts";

/** Refuses an upstream URL the platform must not call (private, internal or non-HTTP targets). */
export function assertSafeUpstream(field: string, url: string): void {
  const verdict = checkUpstreamUrl(url);
  if (!verdict.allowed) throw new ApiError("SSRF_BLOCKED", verdict.message, { details: { field, reason: verdict.reason } });
}

/** The resource if it exists and belongs to the tenant: 404 if unknown, 403 if another tenant's. */
export function assertOwned<T extends { tenantId: string }>(row: T | undefined, tenantId: string, what: string): T {
  if (!row) throw notFound(what);
  if (row.tenantId !== tenantId) throw forbidden(what);
  return row;
}

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

/**
 * `412 PRECONDITION_FAILED` when an `If-Match` (its accepted `versions`) does not name the resource's current
 * version. A refusal before the write, so a stale tag costs no write; the write itself repeats the check atomically.
 */
export function assertVersionMatches(row: { version: number }, versions: readonly number[] | undefined, what: string): void {
  if (versions && !versions.includes(row.version)) throw preconditionFailed(what, row.version);
}

export const preconditionFailed = (what: string, version: number) =>
  new ApiError("PRECONDITION_FAILED", `The ${what} changed since the ETag sent in If-Match; fetch it again`, {
    details: { etag: etagOf(version) },
    headers: { ETag: etagOf(version) },
  });
