/**
 * Services: the one set of rules for creating, changing and deleting them, used by the API (`/v1/services`) and by the
 * dashboard's forms. The request schemas (also the API's OpenAPI document), the cross-field checks (URLs the platform
 * may call, credentials per upstream authentication method, networks of the mode, no paywall left with networks of
 * another mode), secrets sealed before they are stored, the beta cap, and If-Match (`versions`) against lost updates.
 *
 * Each command records an account event in the write's own batch. The API passes `record` to store its idempotent
 * answer in the same batch: it is given the row as it will be stored.
 */
import { z } from "@hono/zod-openapi";
import { auditOf as accountAudit } from "../../db/account-events.ts";
import type { Db } from "../../db/client.ts";
import type { ResponseRecorder } from "../../db/idempotency.ts";
import { rowAfterUpdate } from "../../db/idempotency.ts";
import type { AccountEventActor, Mode, PaywallRow, ServiceRow, StoredAuthConfig } from "../../db/schema.ts";
import {
  deleteServiceRow,
  findPaywallsOfService,
  findService,
  findServiceWithPaywalls,
  insertServiceWithinCap,
  updateServiceRow,
} from "../../db/services.ts";
import { newId } from "../../lib/ids.ts";
import type { Config } from "../config.ts";
import { ApiError, invalid } from "../http/errors.ts";
import { modeOfNetwork, NETWORKS_BY_MODE, networksOutsideMode } from "../money/networks.ts";
import { AUTH_METHODS, type AuthMethod, authConfigIssues } from "../secrets/auth-config.ts";
import { type KeyRing, MASK } from "../secrets/secret-box.ts";
import { sealAuthConfig } from "../secrets/secret-fields.ts";
import { ModeSchema, NetworkListSchema, RoutePathSchema, SecretValueSchema, TextSchema, UrlSchema } from "./fields.ts";
import { assertOwned, assertSafeUpstream, assertVersionMatches, preconditionFailed } from "./guards.ts";

// ---------------------------------------------------------------------------------------------------------------
// Request schemas

const AuthConfigInputSchema = z
  .record(z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,63}$/, "A field name such as bearerToken"), SecretValueSchema(4096).min(1))
  .refine((config) => Object.keys(config).length <= 8, { message: "At most 8 fields" })
  .openapi({
    description:
      "Credential fields of the authMethod: bearer → bearerToken; token → token; x-api-key → apiKey; custom-header → headerName, headerValue; query-param → paramName, paramValue; x-api-key-secret → apiKey, apiSecret; json-body-field → fieldName, fieldValue; none and bearer-customer → none. Secret values are encrypted at rest and returned as `***`; send `***` on update to keep a stored value.",
    example: { bearerToken: "sk_live_upstream_credential" },
  });

const text = TextSchema;

const serviceFields = {
  name: text(100).min(1).openapi({ example: "Weather API" }),
  description: text(10_000, "multi-line").nullable(),
  baseUrl: UrlSchema,
  authMethod: z.enum(AUTH_METHODS),
  authConfig: AuthConfigInputSchema,
  networks: NetworkListSchema.openapi({ example: ["base-sepolia"] }),
  mode: ModeSchema,
  contactEmail: z.email().max(320).nullable(),
  categories: z.array(text(50).min(1)).max(20),
  docsHomepage: UrlSchema.nullable(),
  docsApiReference: UrlSchema.nullable(),
  docsLlms: UrlSchema.nullable(),
  xGuidance: text(5000, "multi-line").nullable(),
  publicRoutes: z.array(RoutePathSchema).max(50),
  siwxRoutes: z.array(RoutePathSchema).max(50),
};

export const ServiceCreateSchema = z
  .strictObject({
    name: serviceFields.name,
    baseUrl: serviceFields.baseUrl,
    authMethod: serviceFields.authMethod,
    networks: serviceFields.networks,
    mode: serviceFields.mode,
    description: serviceFields.description.optional(),
    authConfig: serviceFields.authConfig.optional(),
    contactEmail: serviceFields.contactEmail.optional(),
    categories: serviceFields.categories.optional(),
    docsHomepage: serviceFields.docsHomepage.optional(),
    docsApiReference: serviceFields.docsApiReference.optional(),
    docsLlms: serviceFields.docsLlms.optional(),
    xGuidance: serviceFields.xGuidance.optional(),
    publicRoutes: serviceFields.publicRoutes.optional(),
    siwxRoutes: serviceFields.siwxRoutes.optional(),
  })
  .superRefine((body, ctx) => {
    body.networks.forEach((network, i) => {
      if (modeOfNetwork(network) !== body.mode) {
        ctx.addIssue({ code: "custom", path: ["networks", i], message: `"${network}" is not a ${body.mode} network` });
      }
    });
  })
  .openapi("ServiceCreate", {
    example: {
      name: "Weather API",
      baseUrl: "https://api.weather.example.com",
      authMethod: "bearer",
      authConfig: { bearerToken: "upstream-secret" },
      networks: ["base-sepolia"],
      mode: "testnet",
    },
  });

export const ServiceUpdateSchema = z
  .strictObject({
    name: serviceFields.name,
    description: serviceFields.description,
    baseUrl: serviceFields.baseUrl,
    authMethod: serviceFields.authMethod,
    authConfig: serviceFields.authConfig,
    networks: serviceFields.networks,
    mode: serviceFields.mode,
    contactEmail: serviceFields.contactEmail,
    categories: serviceFields.categories,
    docsHomepage: serviceFields.docsHomepage,
    docsApiReference: serviceFields.docsApiReference,
    docsLlms: serviceFields.docsLlms,
    xGuidance: serviceFields.xGuidance,
    publicRoutes: serviceFields.publicRoutes,
    siwxRoutes: serviceFields.siwxRoutes,
  })
  .partial()
  .openapi("ServiceUpdate", { example: { name: "Weather API v2", authConfig: { bearerToken: "***" } } });

export type ServiceCreate = z.infer<typeof ServiceCreateSchema>;
export type ServiceUpdate = z.infer<typeof ServiceUpdateSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Commands

/** Who writes, for whom, with what: the same for every command of the catalog (services and paywalls). */
export interface CatalogWriter {
  db: Db;
  ring: KeyRing;
  config: Config;
  tenant: { id: string; walletAddress: string; tempoWalletAddress: string | null };
  now: Date;
  actor: AccountEventActor;
  ip: string | null;
}

/** The account event of a catalog change, written in the change's batch only if `condition` holds (see `Audit`). */
export const auditOf = (w: CatalogWriter, action: string, subject: string, detail: string | null = null) =>
  accountAudit(w.db, { tenantId: w.tenant.id, actor: w.actor, ip: w.ip, at: w.now }, action, subject, detail);

/**
 * The names of the fields a change really changes, for the activity list (never their values): a field sent with the
 * value it already has is left out; a credential counts as changed unless every value sent keeps the stored one (`***`).
 */
export function changedKeys(patch: object, existing: object): string[] {
  const before = existing as Record<string, unknown>;
  const secretsKept = (k: string, v: unknown) => {
    // Credentials: the same names, every value `***` (kept as stored).
    const pairs =
      k === "authConfig"
        ? Object.entries(v as Record<string, string>)
        : ((v as { key: string; value: string }[] | null) ?? []).map((h) => [h.key, h.value] as const);
    const stored =
      k === "authConfig"
        ? Object.keys((before[k] as Record<string, string>) ?? {})
        : ((before[k] as { key: string }[] | null) ?? []).map((h) => h.key);
    return pairs.every(([, value]) => value === MASK) && pairs.map(([name]) => name).join() === stored.join();
  };
  const changed = Object.entries(patch).filter(([k, v]) => {
    if (v === undefined) return false;
    if (k === "authConfig" || k === "headers") return !secretsKept(k, v);
    return JSON.stringify(v) !== JSON.stringify(before[k] ?? null);
  });
  return changed.map(([k]) => k);
}

/** `changedKeys` as the activity list shows it: "name, baseUrl", or "nothing". */
export const changedFields = (patch: object, existing: object): string => changedKeys(patch, existing).join(", ") || "nothing";

/** Fields holding URLs: each is held to the upstream-URL rule (public http or https), docs links included. */
const URL_FIELDS = ["baseUrl", "docsHomepage", "docsApiReference", "docsLlms"] as const;

/** Under `npm run dev` the upstream itself (`baseUrl`) may be on this machine; the links buyers follow never are. */
function assertSafeUrls(body: Partial<Record<(typeof URL_FIELDS)[number], string | null>>, config: Config): void {
  for (const field of URL_FIELDS) {
    const url = body[field];
    if (url) assertSafeUpstream(field, url, { upstreamsAllowLoopback: field === "baseUrl" && config.upstreamsAllowLoopback });
  }
}

/** Creates a service from a valid `ServiceCreate` body; returns the row as stored. */
export async function createService(
  w: CatalogWriter,
  body: ServiceCreate,
  record?: (row: ServiceRow) => ResponseRecorder | undefined,
): Promise<ServiceRow> {
  const tenantId = w.tenant.id;
  assertSafeUrls(body, w.config);
  const authConfig = body.authConfig ?? {};
  const issues = authConfigIssues(body.authMethod, authConfig);
  if (issues.length > 0) throw invalid(issues);

  const id = newId("svc");
  const row: ServiceRow = {
    id,
    tenantId,
    name: body.name,
    description: body.description ?? null,
    baseUrl: body.baseUrl,
    authMethod: body.authMethod,
    authConfig: await sealAuthConfig(w.ring, { tenantId, serviceId: id }, body.authMethod, authConfig),
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
    createdAt: w.now,
    updatedAt: w.now,
    version: 1,
  };
  const stored = await insertServiceWithinCap(
    w.db,
    row,
    w.config.maxServicesPerTenant,
    record?.(row),
    auditOf(w, "service-created", row.name),
  );
  if (!stored) {
    throw new ApiError(
      "BETA_LIMIT_SERVICES",
      `A tenant may hold at most ${w.config.maxServicesPerTenant} services during the beta`,
    );
  }
  return row;
}

/** The stored authConfig after the update, validated against the resulting authMethod. */
async function nextAuthConfig(
  ring: KeyRing,
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
  return patch.authConfig === undefined ? stored : sealAuthConfig(ring, owner, method, patch.authConfig, stored);
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

/**
 * Applies a valid `ServiceUpdate` to the tenant's service; with `versions` (If-Match) only to one of them. Returns the
 * service and its paywalls as they are after the write; with a recorder from `record`, as the answer was built before it.
 */
export async function updateService(
  w: CatalogWriter,
  id: string,
  patch: ServiceUpdate,
  versions: readonly number[] | undefined,
  record?: (expected: ServiceRow, paywalls: PaywallRow[]) => ResponseRecorder | undefined,
): Promise<{ service: ServiceRow; paywalls: PaywallRow[] }> {
  const tenantId = w.tenant.id;
  const found = await findServiceWithPaywalls(w.db, id);
  const existing = assertOwned(found?.service, tenantId, "Service");
  assertSafeUrls(patch, w.config);

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
  if (mode !== existing.mode) await assertNoOrphans(w.db, id, mode);
  const authConfig = await nextAuthConfig(w.ring, { tenantId, serviceId: id }, patch, existing.authConfig, existing.authMethod);

  // A bad request is refused as such whatever its tag; a stale tag then costs no write (the write checks it again).
  assertVersionMatches(existing, versions, "service");
  const { authConfig: _ignored, ...fields } = patch;
  const set = { ...fields, ...(authConfig ? { authConfig } : {}), updatedAt: w.now };
  // With a recorder the answer is stored in the write's own batch: it is built first, from the state read (the
  // service and its paywalls, which bump its version), and the write applies only to that version.
  const expected = rowAfterUpdate(existing, set);
  const paywalls = found?.paywalls ?? [];
  const recorder = record?.(expected, paywalls);
  const updated = await updateServiceRow(
    w.db,
    id,
    set,
    mode !== existing.mode ? NETWORKS_BY_MODE[mode] : undefined,
    recorder ? [existing.version] : versions,
    recorder,
    auditOf(w, "service-updated", expected.name, changedFields(patch, existing)),
  );
  if (!updated) {
    // Gone meanwhile, changed since the If-Match tag (or, with a recorder, since it was read), or a paywall of the
    // old mode was written after the check: judged again as it is now.
    const current = await findService(w.db, id);
    if (!current) throw new ApiError("NOT_FOUND", "Service not found");
    assertVersionMatches(current, versions, "service");
    await assertNoOrphans(w.db, id, mode);
    throw new ApiError("CONFLICT", "The service or its paywalls changed during the request; retry it");
  }
  return recorder ? { service: expected, paywalls } : updated;
}

/** Deletes the tenant's service and its paywalls; with `versions` (If-Match) only at one of them. */
export async function deleteService(
  w: CatalogWriter,
  id: string,
  versions: readonly number[] | undefined,
  recorder?: ResponseRecorder,
): Promise<void> {
  const existing = assertOwned(await findService(w.db, id), w.tenant.id, "Service");
  assertVersionMatches(existing, versions, "service");
  if (!(await deleteServiceRow(w.db, id, versions, recorder, auditOf(w, "service-deleted", existing.name)))) {
    const current = await findService(w.db, id);
    if (current) throw preconditionFailed("service", current.version);
    throw new ApiError("NOT_FOUND", "Service not found");
  }
}
