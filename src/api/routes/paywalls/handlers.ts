import type { RouteHandler } from "@hono/zod-openapi";
import { getConfig, keyRing } from "../../../core/config.ts";
import { outputExampleIssues } from "../../../core/discovery/json-schema.ts";
import { ApiError, invalid } from "../../../core/http/errors.ts";
import { commonMode, networksOutsideMode } from "../../../core/money/networks.ts";
import { headersMaskedWithoutValue, sealHeaders } from "../../../core/secrets/secret-fields.ts";
import type { Db } from "../../../db/client.ts";
import { isForeignKeyViolation, isUniqueViolation } from "../../../db/errors.ts";
import { rowAfterUpdate } from "../../../db/idempotency.ts";
import {
  deletePaywallRow,
  findPaywall,
  findPaywallsPage,
  insertPaywallWithinCap,
  updatePaywallRow,
} from "../../../db/paywalls.ts";
import type { PaywallRow, ServiceRow, Tenant } from "../../../db/schema.ts";
import { findService } from "../../../db/services.ts";
import { etagOf, ifMatchVersions, noneMatchHits } from "../../../lib/etag.ts";
import { newId } from "../../../lib/ids.ts";
import type { Issue } from "../../../lib/issues.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { recordResponse } from "../../middleware/idempotency.ts";
import { pagination } from "../../paging.ts";
import { assertOwned, assertSafeUpstream, assertVersionMatches, preconditionFailed } from "../guards.ts";
import type * as routes from "./routes.ts";
import { HTTP_METHODS } from "./schemas.ts";
import { toPaywall } from "./serialize.ts";

export const DEFAULT_TIMEOUT_MS = 60_000;

/** The service a paywall points at: it must exist and belong to the tenant. */
async function ownService(db: Db, serviceId: string, tenantId: string): Promise<ServiceRow> {
  const service = await findService(db, serviceId);
  if (!service || service.tenantId !== tenantId) {
    throw new ApiError("INVALID_SERVICE", "serviceId does not name one of your services", { details: { serviceId } });
  }
  return service;
}

interface Target {
  targetType: "PROXY" | "ROUTE";
  targetUrl: string | null;
  targetRoute: string | null;
  serviceId: string | null;
  networks: string[];
}

/**
 * Rules that span fields, checked on the paywall as it will be stored: a PROXY needs a `targetUrl`,
 * a ROUTE a `targetRoute` and a service; networks match the service's mode, or share one mode without a service.
 * `sent` names the fields the request carried, so a field that does not apply to the type is refused only when sent.
 */
function targetIssues(target: Target, service: ServiceRow | undefined, sent: Partial<Record<keyof Target, unknown>>): Issue[] {
  const issues: Issue[] = [];
  if (target.targetType === "PROXY") {
    if (!target.targetUrl) issues.push({ path: "targetUrl", message: "Required when targetType is PROXY" });
    if (sent.targetRoute != null) issues.push({ path: "targetRoute", message: "Applies to ROUTE paywalls only" });
  } else {
    if (!target.targetRoute) issues.push({ path: "targetRoute", message: "Required when targetType is ROUTE" });
    if (!target.serviceId) issues.push({ path: "serviceId", message: "Required when targetType is ROUTE" });
    if (sent.targetUrl != null) issues.push({ path: "targetUrl", message: "Applies to PROXY paywalls only" });
  }
  if (service) {
    for (const n of networksOutsideMode(target.networks, service.mode)) {
      issues.push({
        path: `networks.${target.networks.indexOf(n)}`,
        message: `"${n}" is not a ${service.mode} network, the service's mode`,
      });
    }
  } else if (!commonMode(target.networks)) {
    issues.push({ path: "networks", message: "Without a service, all networks must be of one mode" });
  }
  return issues;
}

function maskedHeaderIssues(
  headers: { key: string; value: string }[] | null | undefined,
  stored: PaywallRow["headers"] = null,
): Issue[] {
  return headers
    ? headersMaskedWithoutValue(headers, stored ?? []).map((key) => ({
        path: "headers",
        message: `"***" keeps a stored value, but header "${key}" has none`,
      }))
    : [];
}

/**
 * A slug taken in the service is `409 CONFLICT`; a service deleted between its check and the write
 * (the foreign key refuses the row) is `400 INVALID_SERVICE`, as if the check had seen it gone.
 */
function conflictOnDuplicateSlug(err: unknown): never {
  if (isUniqueViolation(err)) throw new ApiError("CONFLICT", "A paywall with this slug already exists in the service");
  if (isForeignKeyViolation(err)) throw new ApiError("INVALID_SERVICE", "serviceId does not name one of your services");
  throw err;
}

/**
 * The service's mode changed after the paywall's networks were checked against it, so the write was refused:
 * the request is judged again against the service as it is now (a 400 naming the networks, as it would be if
 * sent now), or a retryable conflict if it would pass.
 */
async function staleServiceError(db: Db, target: Target, tenantId: string, sent: Partial<Record<keyof Target, unknown>>) {
  const fresh = target.serviceId ? await ownService(db, target.serviceId, tenantId) : undefined;
  const issues = targetIssues(target, fresh, sent);
  return issues.length > 0 ? invalid(issues) : new ApiError("CONFLICT", "The service changed during the request; retry it");
}

export const createPaywall: RouteHandler<typeof routes.createPaywall, ApiEnv> = async (c) => {
  const body = c.req.valid("json");
  const tenant = c.var.auth.tenant;
  const config = getConfig(c.env);
  const service = body.serviceId ? await ownService(c.var.db, body.serviceId, tenant.id) : undefined;
  const target: Target = {
    targetType: body.targetType,
    targetUrl: body.targetUrl ?? null,
    targetRoute: body.targetRoute ?? null,
    serviceId: body.serviceId ?? null,
    networks: body.networks,
  };
  const issues = [
    ...targetIssues(target, service, body),
    ...maskedHeaderIssues(body.headers),
    ...outputExampleIssues(body.outputExample, body.outputSchema),
  ];
  if (issues.length > 0) throw invalid(issues);
  if (target.targetUrl) assertSafeUpstream("targetUrl", target.targetUrl);

  const id = newId("pw");
  const now = new Date();
  const row: PaywallRow = {
    id,
    tenantId: tenant.id,
    serviceId: target.serviceId,
    slug: body.slug,
    name: body.name,
    description: body.description ?? null,
    targetType: target.targetType,
    targetUrl: target.targetType === "PROXY" ? target.targetUrl : null,
    targetRoute: target.targetType === "ROUTE" ? target.targetRoute : null,
    price: body.price,
    currency: body.currency,
    networks: body.networks,
    merchantWallet: tenant.walletAddress,
    timeout: body.timeout ?? DEFAULT_TIMEOUT_MS,
    allowedMethods: body.allowedMethods ?? [...HTTP_METHODS],
    allowedHeaders: [],
    fulfillmentMode: body.fulfillmentMode,
    enabled: body.enabled ?? true,
    headers: body.headers ? await sealHeaders(keyRing(c.env), { tenantId: tenant.id, paywallId: id }, body.headers) : null,
    queryParams: body.queryParams ?? null,
    cacheRules: body.cacheRules ?? null,
    inputSchema: body.inputSchema ?? null,
    outputSchema: body.outputSchema ?? null,
    outputExample: body.outputExample ?? null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  // The answer is built before the write: with an Idempotency-Key it is stored in the write's own batch.
  const answer = { data: toPaywall(row, config), meta: meta(c) };
  const etag = etagOf(row.version);
  const outcome = await insertPaywallWithinCap(
    c.var.db,
    row,
    config.maxPaywallsPerTenant,
    service?.mode,
    recordResponse(c, 201, answer, { ETag: etag }),
  ).catch(conflictOnDuplicateSlug);
  if ("refused" in outcome) {
    if (outcome.refused === "service-mode") throw await staleServiceError(c.var.db, target, tenant.id, body);
    throw new ApiError(
      "BETA_LIMIT_PAYWALLS",
      `A tenant may hold at most ${config.maxPaywallsPerTenant} paywalls during the beta`,
    );
  }
  c.header("ETag", etag);
  return c.json(answer, 201);
};

export const listPaywalls: RouteHandler<typeof routes.listPaywalls, ApiEnv> = async (c) => {
  const { limit, offset, serviceId, enabled } = c.req.valid("query");
  const tenantId = c.var.auth.tenant.id;
  if (serviceId) assertOwned(await findService(c.var.db, serviceId), tenantId, "Service");
  const config = getConfig(c.env);
  const page = await findPaywallsPage(c.var.db, tenantId, { limit, offset }, { serviceId, enabled });
  return c.json(
    {
      data: page.rows.map((row) => toPaywall(row, config)),
      meta: { ...meta(c), pagination: pagination(page.total, limit, offset) },
    },
    200,
  );
};

export const getPaywall: RouteHandler<typeof routes.getPaywall, ApiEnv> = async (c) => {
  const row = assertOwned(await findPaywall(c.var.db, c.req.valid("param").id), c.var.auth.tenant.id, "Paywall");
  c.header("ETag", etagOf(row.version));
  if (noneMatchHits(c.req.valid("header")["if-none-match"], row.version)) return c.body(null, 304);
  return c.json({ data: toPaywall(row, getConfig(c.env)), meta: meta(c) }, 200);
};

/** A wallet the tenant owns, in the tenant's stored spelling; anything else is refused. */
function ownWallet(tenant: Tenant, wallet: string): string {
  const own = [tenant.walletAddress, tenant.tempoWalletAddress].find((w) => w && w.toLowerCase() === wallet.toLowerCase());
  if (!own)
    throw new ApiError("INVALID_WALLET", "merchantWallet must be one of your own wallets (walletAddress or tempoWalletAddress)");
  return own;
}

export const updatePaywall: RouteHandler<typeof routes.updatePaywall, ApiEnv> = async (c) => {
  const patch = c.req.valid("json");
  const { id } = c.req.valid("param");
  const tenant = c.var.auth.tenant;
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  const existing = assertOwned(await findPaywall(c.var.db, id), tenant.id, "Paywall");

  const target: Target = {
    targetType: patch.targetType ?? existing.targetType,
    targetUrl: patch.targetUrl !== undefined ? patch.targetUrl : existing.targetUrl,
    targetRoute: patch.targetRoute !== undefined ? patch.targetRoute : existing.targetRoute,
    serviceId: patch.serviceId !== undefined ? patch.serviceId : existing.serviceId,
    networks: patch.networks ?? existing.networks,
  };
  const service = target.serviceId ? await ownService(c.var.db, target.serviceId, tenant.id) : undefined;
  const issues = [
    ...targetIssues(target, service, patch),
    ...maskedHeaderIssues(patch.headers, existing.headers),
    ...outputExampleIssues(
      patch.outputExample !== undefined ? patch.outputExample : existing.outputExample,
      patch.outputSchema !== undefined ? patch.outputSchema : existing.outputSchema,
    ),
  ];
  if (issues.length > 0) throw invalid(issues);
  if (patch.targetUrl) assertSafeUpstream("targetUrl", patch.targetUrl);
  const merchantWallet = patch.merchantWallet === undefined ? undefined : ownWallet(tenant, patch.merchantWallet);
  const headers =
    patch.headers === undefined
      ? undefined
      : patch.headers === null
        ? null
        : await sealHeaders(keyRing(c.env), { tenantId: tenant.id, paywallId: id }, patch.headers, existing.headers ?? []);

  // A bad request is refused as such whatever its tag; a stale tag then costs no write (the write checks it again).
  assertVersionMatches(existing, versions, "paywall");
  const set = {
    ...patch,
    targetUrl: target.targetType === "PROXY" ? target.targetUrl : null,
    targetRoute: target.targetType === "ROUTE" ? target.targetRoute : null,
    ...(merchantWallet === undefined ? {} : { merchantWallet }),
    ...(headers === undefined ? {} : { headers }),
    updatedAt: new Date(),
  };
  // With an Idempotency-Key the answer is stored in the write's own batch: it is built first, from the state read,
  // and the write applies only to that version.
  const expected = rowAfterUpdate(existing, set);
  const config = getConfig(c.env);
  const answer = { data: toPaywall(expected, config), meta: meta(c) };
  const recorder = recordResponse(c, 200, answer, { ETag: etagOf(expected.version) });
  const row = await updatePaywallRow(
    c.var.db,
    id,
    set,
    service && { serviceId: service.id, mode: service.mode },
    recorder ? [existing.version] : versions,
    recorder,
  ).catch(conflictOnDuplicateSlug);
  if (!row) {
    // Gone meanwhile, changed since the If-Match tag (or, with a key, since it was read), or (with a service) the
    // service's mode changed after the check.
    const current = await findPaywall(c.var.db, id);
    if (!current) throw new ApiError("NOT_FOUND", "Paywall not found");
    assertVersionMatches(current, versions, "paywall");
    if (recorder && current.version !== existing.version) {
      throw new ApiError("CONFLICT", "The paywall changed during the request; retry it");
    }
    if (!service) throw new ApiError("NOT_FOUND", "Paywall not found");
    throw await staleServiceError(c.var.db, target, tenant.id, patch);
  }
  if (recorder) {
    c.header("ETag", etagOf(expected.version));
    return c.json(answer, 200);
  }
  c.header("ETag", etagOf(row.version));
  return c.json({ data: toPaywall(row, config), meta: meta(c) }, 200);
};

export const deletePaywall: RouteHandler<typeof routes.deletePaywall, ApiEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  assertVersionMatches(assertOwned(await findPaywall(c.var.db, id), c.var.auth.tenant.id, "Paywall"), versions, "paywall");
  const answer = { data: { id, deleted: true as const }, meta: meta(c) };
  if (!(await deletePaywallRow(c.var.db, id, versions, recordResponse(c, 200, answer)))) {
    const current = await findPaywall(c.var.db, id);
    if (current) throw preconditionFailed("paywall", current.version);
    throw new ApiError("NOT_FOUND", "Paywall not found");
  }
  return c.json(answer, 200);
};
