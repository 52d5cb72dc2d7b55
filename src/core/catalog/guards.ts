/** Checks shared by every write of a service or paywall, through the API or the dashboard. */
import { etagOf } from "../../lib/etag.ts";
import { checkUpstreamUrl } from "../../lib/ssrf.ts";
import type { Config } from "../config.ts";
import { ApiError, forbidden, notFound } from "../http/errors.ts";

/**
 * Refuses an upstream URL the platform must not call (private, internal or non-HTTP targets); this machine only under
 * `npm run dev` (`Config.upstreamsAllowLoopback`).
 */
export function assertSafeUpstream(field: string, url: string, config: Pick<Config, "upstreamsAllowLoopback">): void {
  const verdict = checkUpstreamUrl(url, { allowLoopback: config.upstreamsAllowLoopback });
  if (!verdict.allowed) {
    throw new ApiError("SSRF_BLOCKED", verdict.message, {
      details: [{ path: field, message: verdict.message, reason: verdict.reason }],
    });
  }
}

/** The resource if it exists and belongs to the tenant: 404 if unknown, 403 if another tenant's. */
export function assertOwned<T extends { tenantId: string }>(row: T | undefined, tenantId: string, what: string): T {
  if (!row) throw notFound(what);
  if (row.tenantId !== tenantId) throw forbidden(what);
  return row;
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
    details: [{ path: "", message: `The current ETag is ${etagOf(version)}` }],
    headers: { ETag: etagOf(version) },
  });
