import type { RouteHandler } from "@hono/zod-openapi";
import { getConfig, keyRing } from "../../../core/config.ts";
import { ApiError, invalid } from "../../../core/http/errors.ts";
import { NETWORKS_BY_MODE, networksOutsideMode } from "../../../core/money/networks.ts";
import { type AuthMethod, authConfigIssues } from "../../../core/secrets/auth-config.ts";
import { sealAuthConfig } from "../../../core/secrets/secret-fields.ts";
import type { Db } from "../../../db/client.ts";
import { rowAfterUpdate } from "../../../db/idempotency.ts";
import type { Mode, ServiceRow, StoredAuthConfig } from "../../../db/schema.ts";
import {
  deleteServiceRow,
  findPaywallsOfService,
  findService,
  findServicesPage,
  findServiceWithPaywalls,
  insertServiceWithinCap,
  updateServiceRow,
} from "../../../db/services.ts";
import { etagOf, ifMatchVersions, noneMatchHits } from "../../../lib/etag.ts";
import { newId } from "../../../lib/ids.ts";
import type { ApiEnv } from "../../env.ts";
import { meta } from "../../envelope.ts";
import { recordResponse } from "../../middleware/idempotency.ts";
import { pagination } from "../../paging.ts";
import { assertOwned, assertSafeUpstream, assertVersionMatches, preconditionFailed } from "../guards.ts";
import type * as routes from "./routes.ts";
import type { ServiceUpdate } from "./schemas.ts";
import { toService } from "./serialize.ts";

/** Fields holding URLs: each is held to the upstream-URL rule (public http or https), docs links included. */
const URL_FIELDS = ["baseUrl", "docsHomepage", "docsApiReference", "docsLlms"] as const;

function assertSafeUrls(body: Partial<Record<(typeof URL_FIELDS)[number], string | null>>): void {
  for (const field of URL_FIELDS) {
    const url = body[field];
    if (url) assertSafeUpstream(field, url);
  }
}

export const createService: RouteHandler<typeof routes.createService, ApiEnv> = async (c) => {
  const body = c.req.valid("json");
  const tenantId = c.var.auth.tenant.id;
  const config = getConfig(c.env);
  assertSafeUrls(body);
  const authConfig = body.authConfig ?? {};
  const issues = authConfigIssues(body.authMethod, authConfig);
  if (issues.length > 0) throw invalid(issues);

  const id = newId("svc");
  const now = new Date();
  const row: ServiceRow = {
    id,
    tenantId,
    name: body.name,
    description: body.description ?? null,
    baseUrl: body.baseUrl,
    authMethod: body.authMethod,
    authConfig: await sealAuthConfig(keyRing(c.env), { tenantId, serviceId: id }, body.authMethod, authConfig),
    networks: body.networks,
    mode: body.mode,
    contactEmail: body.contactEmail ?? null,
    categories: body.categories ?? [],
    docsHomepage: body.docsHomepage ?? null,
    docsApiReference: body.docsApiReference ?? null,
    docsLlms: body.docsLlms ?? null,
    xGuidance: body.xGuidance ?? null,
    publicRoutes: body.publicRoutes ?? [],
    siwxRoutes: body.siwxRoutes ?? [],
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  // The answer is built before the write: with an Idempotency-Key it is stored in the write's own batch.
  const answer = { data: toService(row, [], config), meta: meta(c) };
  const etag = etagOf(row.version);
  const stored = await insertServiceWithinCap(
    c.var.db,
    row,
    config.maxServicesPerTenant,
    recordResponse(c, 201, answer, { ETag: etag }),
  );
  if (!stored) {
    throw new ApiError(
      "BETA_LIMIT_SERVICES",
      `A tenant may hold at most ${config.maxServicesPerTenant} services during the beta`,
    );
  }
  c.header("ETag", etag);
  return c.json(answer, 201);
};

export const listServices: RouteHandler<typeof routes.listServices, ApiEnv> = async (c) => {
  const { limit, offset, mode } = c.req.valid("query");
  const config = getConfig(c.env);
  const page = await findServicesPage(c.var.db, c.var.auth.tenant.id, { limit, offset }, { mode });
  return c.json(
    {
      data: page.items.map(({ service, paywalls }) => toService(service, paywalls, config)),
      meta: { ...meta(c), pagination: pagination(page.total, limit, offset) },
    },
    200,
  );
};

export const getService: RouteHandler<typeof routes.getService, ApiEnv> = async (c) => {
  const found = await findServiceWithPaywalls(c.var.db, c.req.valid("param").id);
  const service = assertOwned(found?.service, c.var.auth.tenant.id, "Service");
  c.header("ETag", etagOf(service.version));
  if (noneMatchHits(c.req.valid("header")["if-none-match"], service.version)) return c.body(null, 304);
  return c.json({ data: toService(service, found?.paywalls ?? [], getConfig(c.env)), meta: meta(c) }, 200);
};

/** The stored authConfig after the update, validated against the resulting authMethod. */
async function nextAuthConfig(
  env: Env,
  owner: { tenantId: string; serviceId: string },
  patch: ServiceUpdate,
  stored: StoredAuthConfig,
  storedMethod: string,
) {
  if (patch.authMethod === undefined && patch.authConfig === undefined) return undefined;
  const method = (patch.authMethod ?? storedMethod) as AuthMethod;
  const input = patch.authConfig ?? stored;
  const issues = authConfigIssues(method, input, stored);
  if (issues.length > 0) throw invalid(issues);
  return patch.authConfig === undefined ? stored : sealAuthConfig(keyRing(env), owner, method, patch.authConfig, stored);
}

/** A mode change must not leave a paywall of the service with networks of the other mode: 400 naming them. */
async function assertNoOrphans(db: Db, serviceId: string, mode: Mode): Promise<void> {
  const orphans = (await findPaywallsOfService(db, serviceId)).filter((p) => networksOutsideMode(p.networks, mode).length > 0);
  if (orphans.length > 0) {
    throw invalid(
      orphans.map((p) => ({
        path: "mode",
        message: `Paywall "${p.slug}" (${p.id}) accepts ${p.networks.join(", ")}, not ${mode} networks`,
      })),
    );
  }
}

export const updateService: RouteHandler<typeof routes.updateService, ApiEnv> = async (c) => {
  const patch = c.req.valid("json");
  const { id } = c.req.valid("param");
  const tenantId = c.var.auth.tenant.id;
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  const found = await findServiceWithPaywalls(c.var.db, id);
  const existing = assertOwned(found?.service, tenantId, "Service");
  assertSafeUrls(patch);

  const mode = patch.mode ?? existing.mode;
  const networks = patch.networks ?? existing.networks;
  const strayNetworks = networksOutsideMode(networks, mode);
  if (strayNetworks.length > 0) {
    throw invalid(
      strayNetworks.map((n) => ({
        path: `networks.${networks.indexOf(n)}`,
        message: `"${n}" is not a ${mode} network${patch.networks ? "" : ": send networks of the new mode with it"}`,
      })),
    );
  }
  if (mode !== existing.mode) await assertNoOrphans(c.var.db, id, mode);
  const authConfig = await nextAuthConfig(c.env, { tenantId, serviceId: id }, patch, existing.authConfig, existing.authMethod);

  // A bad request is refused as such whatever its tag; a stale tag then costs no write (the write checks it again).
  assertVersionMatches(existing, versions, "service");
  const { authConfig: _ignored, ...fields } = patch;
  const set = { ...fields, ...(authConfig ? { authConfig } : {}), updatedAt: new Date() };
  // With an Idempotency-Key the answer is stored in the write's own batch: it is built first, from the state read
  // (the service and its paywalls, which bump its version), and the write applies only to that version.
  const expected = rowAfterUpdate(existing, set);
  const config = getConfig(c.env);
  const answer = { data: toService(expected, found?.paywalls ?? [], config), meta: meta(c) };
  const recorder = recordResponse(c, 200, answer, { ETag: etagOf(expected.version) });
  const updated = await updateServiceRow(
    c.var.db,
    id,
    set,
    mode !== existing.mode ? NETWORKS_BY_MODE[mode] : undefined,
    recorder ? [existing.version] : versions,
    recorder,
  );
  if (!updated) {
    // Gone meanwhile, changed since the If-Match tag (or, with a key, since it was read), or a paywall of the old
    // mode was written after the check: judged again as it is now.
    const current = await findService(c.var.db, id);
    if (!current) throw new ApiError("NOT_FOUND", "Service not found");
    assertVersionMatches(current, versions, "service");
    await assertNoOrphans(c.var.db, id, mode);
    throw new ApiError("CONFLICT", "The service or its paywalls changed during the request; retry it");
  }
  if (recorder) {
    c.header("ETag", etagOf(expected.version));
    return c.json(answer, 200);
  }
  c.header("ETag", etagOf(updated.service.version));
  return c.json({ data: toService(updated.service, updated.paywalls, config), meta: meta(c) }, 200);
};

export const deleteService: RouteHandler<typeof routes.deleteService, ApiEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const versions = ifMatchVersions(c.req.valid("header")["if-match"]);
  assertVersionMatches(assertOwned(await findService(c.var.db, id), c.var.auth.tenant.id, "Service"), versions, "service");
  const answer = { data: { id, deleted: true as const }, meta: meta(c) };
  if (!(await deleteServiceRow(c.var.db, id, versions, recordResponse(c, 200, answer)))) {
    const current = await findService(c.var.db, id);
    if (current) throw preconditionFailed("service", current.version);
    throw new ApiError("NOT_FOUND", "Service not found");
  }
  return c.json(answer, 200);
};
