/**
 * Paywalls: the one set of rules for creating, changing, enabling and deleting them, used by the API (`/v1/paywalls`)
 * and by the dashboard's forms: the request schemas (also the API's OpenAPI document), the rules that span fields (a
 * target per type, networks of the service's mode, masked header values only where a value is stored, wallets the
 * tenant owns), header values sealed before they are stored, the beta cap, a slug unique in its service, and If-Match
 * (`versions`) against lost updates. Each command records an account event in the write's own batch.
 */
import { z } from "@hono/zod-openapi";
import type { Db } from "../../db/client.ts";
import { isForeignKeyViolation, isUniqueViolation } from "../../db/errors.ts";
import { type ResponseRecorder, rowAfterUpdate } from "../../db/idempotency.ts";
import { deletePaywallRow, findPaywall, insertPaywallWithinCap, setPaywallEnabled, updatePaywallRow } from "../../db/paywalls.ts";
import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import { findService } from "../../db/services.ts";
import { cacheRulesProblems } from "../../lib/cache-rules.ts";
import { newId } from "../../lib/ids.ts";
import type { Issue } from "../../lib/issues.ts";
import { jsonShapeProblem } from "../../lib/json-shape.ts";
import { isDotsOnly } from "../../lib/url-rules.ts";
import { EXAMPLE_LIMITS, jsonSchemaIssues, outputExampleIssues } from "../discovery/json-schema.ts";
import { ApiError, invalid } from "../http/errors.ts";
import { commonMode, networksOutsideMode, supportsX402 } from "../money/networks.ts";
import { DEPOSIT_RULE, depositProblem, PRICE_PATTERN, priceNumberProblem, priceProblem } from "../money/price.ts";
import { headersMaskedWithoutValue, sealHeaders } from "../secrets/secret-fields.ts";
import {
  AllowedHeaderSchema,
  BoundedJsonObjectSchema,
  HeaderNameSchema,
  HeaderValueSchema,
  NetworkIdSchema,
  NetworkListSchema,
  ParamNameSchema,
  RoutePathSchema,
  TextSchema,
  UrlSchema,
  WalletSchema,
} from "./fields.ts";
import { assertOwned, assertSafeUpstream, assertVersionMatches, preconditionFailed } from "./guards.ts";
import { auditOf, type CatalogWriter, changedFields } from "./services.ts";

// ---------------------------------------------------------------------------------------------------------------
// Request schemas

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH"] as const;

const HeaderInputSchema = z.strictObject({
  // `|` is a token character, but it separates the parts that bind the encrypted value to its row and field.
  key: HeaderNameSchema.refine((key) => !key.includes("|"), { message: "Must not contain |" }).openapi({
    description:
      "An HTTP header name the platform does not reserve (Host, hop-by-hop, Authorization, Proxy-*, CF-*, X-Forwarded-*, the payment headers, …), without `|`",
  }),
  value: HeaderValueSchema(1000),
});

const uniqueKeys = (list: { key: string }[] | null | undefined) =>
  !list || new Set(list.map((h) => h.key.toLowerCase())).size === list.length;

const HeadersInputSchema = z
  .array(HeaderInputSchema)
  .max(50)
  .refine(uniqueKeys, { message: "Header keys must not repeat" })
  .nullable()
  .openapi({
    description:
      "Headers sent upstream. Values are encrypted at rest and returned as `***`; on update send `***` to keep a stored value.",
    example: [{ key: "X-Upstream-Token", value: "secret" }],
  });

const QueryParamsSchema = z
  .array(z.strictObject({ key: ParamNameSchema, value: TextSchema(1000) }))
  .max(50)
  .nullable();

const MethodListSchema = z
  .array(z.enum(HTTP_METHODS))
  .min(1)
  .refine((list) => new Set(list).size === list.length, { message: "Methods must not repeat" })
  .openapi({ uniqueItems: true });

/** A JSON Schema of the documented subset (docs/discovery.md), its problems reported at their path inside it. */
const JsonSchemaField = (roots: Parameters<typeof jsonSchemaIssues>[1], description: string) =>
  z
    .record(z.string(), z.unknown())
    .superRefine((value, ctx) => {
      for (const issue of jsonSchemaIssues(value, roots)) {
        ctx.addIssue({ code: "custom", path: issue.path ? issue.path.split(".") : [], message: issue.message });
      }
    })
    .nullable()
    .openapi({ description, example: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } });

/** Discovery fields (docs/discovery.md): optional; a paywall without them is described generically. */
const discoveryFields = {
  inputSchema: JsonSchemaField(
    ["object"],
    'The request\'s input as a JSON Schema 2020-12 object schema (the subset in docs/discovery.md, at most 4096 characters): the query parameters for GET, the JSON body for POST, PUT and PATCH. Published in the discovery document and the x402 Bazaar extension; give constrained properties "examples".',
  ),
  outputSchema: JsonSchemaField(
    ["object", "array"],
    "The answer's JSON as a JSON Schema 2020-12 object or array schema (the same subset and bound).",
  ),
  outputExample: z
    .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .superRefine((value, ctx) => {
      const problem = jsonShapeProblem(value, EXAMPLE_LIMITS);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .nullable()
    .openapi({
      description:
        "An example answer (a JSON object or array, at most 4096 characters); must satisfy outputSchema when both are set.",
      example: { city: "Lisbon", tempC: 21.5 },
    }),
};

const CACHE_RULES_DESCRIPTION =
  "Caching rules: a JSON object at most 8 levels deep and 8192 characters long. The gateway acts on " +
  "`ttlSeconds` (0 to 86400; 0 or absent: no caching), `varyQuery`, `varyHeaders`, `varyBody` and `statuses` " +
  "(a known key of the wrong shape is refused); other keys are kept and not acted on.";

/** `cacheRules`, checked the same way on create and on update. */
const CacheRulesSchema = BoundedJsonObjectSchema({ maxDepth: 8, maxLength: 8192 }).superRefine((rules, ctx) => {
  for (const { key, message } of cacheRulesProblems(rules)) ctx.addIssue({ code: "custom", path: [key], message });
});

/**
 * Sessions (docs/sessions.md): a buyer deposits once into a channel and pays each call with a voucher, settled later
 * in batches. The deposit stays locked until then, so the tenant opts in per paywall; per-call payments are accepted
 * either way. Written as a whole: a `sessions` object sent replaces the stored one.
 */
const SessionsSchema = z
  .strictObject({
    enabled: z.boolean().openapi({ description: "Whether the paywall's 402 also offers a session (x402 only)" }),
    minDeposit: z
      .string({ error: (issue) => (typeof issue.input === "number" ? `Must be a string. ${DEPOSIT_RULE}` : undefined) })
      .superRefine((value, ctx) => {
        const message = depositProblem(value);
        if (message) ctx.addIssue({ code: "custom", message });
      })
      .optional()
      .openapi({
        example: "1000000",
        pattern: PRICE_PATTERN.source,
        maxLength: 13,
        description:
          "The least a buyer deposits to open a session, in USDC micro-units: at least `price`, at most 1000000000000 (1,000,000 USDC). Absent: the price.",
      }),
  })
  .openapi("PaywallSessions", {
    description:
      "Sessions (x402 batch-settlement): off by default, since a session locks the buyer's deposit in a channel settled later; per-call payments stay accepted either way. Needs an EVM network.",
    example: { enabled: true, minDeposit: "1000000" },
  });

const paywallFields = {
  name: TextSchema(100).min(1).openapi({ example: "Forecast" }),
  description: TextSchema(10_000, "multi-line").nullable(),
  targetType: z.enum(["PROXY", "ROUTE"]),
  targetUrl: UrlSchema.nullable(),
  targetRoute: RoutePathSchema,
  price: z
    .string({ error: (issue) => priceNumberProblem(issue.input) })
    .superRefine((value, ctx) => {
      const message = priceProblem(value);
      if (message) ctx.addIssue({ code: "custom", message });
    })
    .openapi({
      example: "10000",
      pattern: PRICE_PATTERN.source,
      maxLength: 16,
      description: "USDC in micro-units (1000000 = 1.00 USDC): a whole number from 1 to 1000000000000000",
    }),
  currency: z.enum(["USDC"]),
  networks: NetworkListSchema.openapi({ example: ["base-sepolia", "tempo-testnet"] }),
  timeout: z.int().min(30_000).max(3_600_000).openapi({ description: "Upstream timeout in milliseconds", example: 60000 }),
  headers: HeadersInputSchema,
  allowedMethods: MethodListSchema,
  allowedHeaders: z.array(AllowedHeaderSchema).max(50),
  queryParams: QueryParamsSchema,
  serviceId: z.string().min(1).max(64).nullable(),
  enabled: z.boolean(),
  fulfillmentMode: z.enum(["PROXY", "SIGNED_URL"]),
  sessions: SessionsSchema,
};

export const PaywallCreateSchema = z
  .strictObject({
    slug: z
      .string()
      .min(1)
      .max(50)
      .regex(/^[a-z0-9._-]+$/, "Lowercase letters, digits, '.', '_' and '-' only")
      .refine((slug) => !isDotsOnly(slug), { message: "Must not be made of dots only" })
      .openapi({ example: "forecast" }),
    name: paywallFields.name,
    targetType: paywallFields.targetType,
    price: paywallFields.price,
    currency: paywallFields.currency,
    fulfillmentMode: paywallFields.fulfillmentMode,
    networks: paywallFields.networks,
    network: NetworkIdSchema.optional().openapi({ description: "If sent, must be one of `networks`" }),
    description: paywallFields.description.optional(),
    targetUrl: paywallFields.targetUrl.optional(),
    targetRoute: paywallFields.targetRoute.optional(),
    timeout: paywallFields.timeout.optional(),
    headers: paywallFields.headers.optional(),
    allowedMethods: paywallFields.allowedMethods.optional(),
    queryParams: paywallFields.queryParams.optional(),
    serviceId: paywallFields.serviceId.optional(),
    enabled: paywallFields.enabled.optional(),
    sessions: paywallFields.sessions.optional(),
    cacheRules: CacheRulesSchema.optional().openapi({
      description: `${CACHE_RULES_DESCRIPTION} Can be changed later with PATCH (an extension of the specification).`,
      example: { ttlSeconds: 60, varyQuery: ["city"] },
    }),
    inputSchema: discoveryFields.inputSchema.optional(),
    outputSchema: discoveryFields.outputSchema.optional(),
    outputExample: discoveryFields.outputExample.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.network !== undefined && !body.networks.includes(body.network)) {
      ctx.addIssue({ code: "custom", path: ["network"], message: "Must be one of networks" });
    }
  })
  .openapi("PaywallCreate", {
    example: {
      slug: "forecast",
      name: "Forecast",
      targetType: "ROUTE",
      targetRoute: "/v1/forecast",
      serviceId: "svc_3f9a0c1d2e4b5a6978c0d1e2",
      price: "10000",
      currency: "USDC",
      networks: ["base-sepolia"],
      fulfillmentMode: "PROXY",
    },
  });

export const PaywallUpdateSchema = z
  .strictObject({
    name: paywallFields.name,
    description: paywallFields.description,
    targetType: paywallFields.targetType,
    targetUrl: paywallFields.targetUrl,
    targetRoute: paywallFields.targetRoute.nullable(),
    price: paywallFields.price,
    currency: paywallFields.currency,
    networks: paywallFields.networks,
    merchantWallet: WalletSchema,
    timeout: paywallFields.timeout,
    headers: paywallFields.headers,
    allowedMethods: paywallFields.allowedMethods,
    allowedHeaders: paywallFields.allowedHeaders,
    queryParams: paywallFields.queryParams,
    serviceId: paywallFields.serviceId,
    enabled: paywallFields.enabled,
    sessions: paywallFields.sessions,
    cacheRules: CacheRulesSchema.nullable().openapi({
      description: `${CACHE_RULES_DESCRIPTION} An extension of the specification, which makes the field create-only: the new rules apply from the next request; \`null\` removes them.`,
      example: { ttlSeconds: 300 },
    }),
    ...discoveryFields,
  })
  .partial()
  .openapi("PaywallUpdate", { example: { price: "20000", enabled: false } });

export type PaywallCreate = z.infer<typeof PaywallCreateSchema>;
export type PaywallUpdate = z.infer<typeof PaywallUpdateSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Commands

export const DEFAULT_TIMEOUT_MS = 60_000;

/** The service a paywall points at: it must exist and belong to the tenant. */
async function ownService(db: Db, serviceId: string, tenantId: string): Promise<ServiceRow> {
  const service = await findService(db, serviceId);
  if (!service || service.tenantId !== tenantId) {
    throw new ApiError("INVALID_SERVICE", "serviceId does not name one of your services", {
      details: [{ path: "serviceId", message: "Not one of your services" }],
    });
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

/** The session settings as stored: `minDeposit` null stands for the price. */
interface Sessions {
  sessionsEnabled: boolean;
  sessionsMinDeposit: string | null;
}

const sessionsOf = (sent: PaywallCreate["sessions"]): Sessions | undefined =>
  sent && { sessionsEnabled: sent.enabled, sessionsMinDeposit: sent.minDeposit ?? null };

/**
 * Sessions on the paywall as it will be stored: on an EVM network only (MPP sessions are not offered), and a minimum
 * deposit of at least the price. A problem is named at `sessions` when the request sent it, else at the field it sent.
 */
function sessionIssues(s: Sessions, price: string, networks: readonly string[], sent: { sessions?: unknown }): Issue[] {
  const issues: Issue[] = [];
  if (s.sessionsEnabled && !supportsX402(networks)) {
    issues.push({
      path: sent.sessions ? "sessions.enabled" : "networks",
      message: "Sessions need an EVM network (x402): MPP sessions are not offered, so a Tempo-only paywall cannot turn them on",
    });
  }
  if (s.sessionsMinDeposit !== null && BigInt(s.sessionsMinDeposit) < BigInt(price)) {
    issues.push({
      path: sent.sessions ? "sessions.minDeposit" : "price",
      message: `The minimum deposit (${s.sessionsMinDeposit}) must be at least the price (${price})`,
    });
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

/** A wallet the tenant owns, in the tenant's stored spelling; anything else is refused. */
function ownWallet(tenant: CatalogWriter["tenant"], wallet: string): string {
  const own = [tenant.walletAddress, tenant.tempoWalletAddress].find((w) => w && w.toLowerCase() === wallet.toLowerCase());
  if (!own)
    throw new ApiError("INVALID_WALLET", "merchantWallet must be one of your own wallets (walletAddress or tempoWalletAddress)");
  return own;
}

/** Creates a paywall from a valid `PaywallCreate` body; returns the row as stored. */
export async function createPaywall(
  w: CatalogWriter,
  body: PaywallCreate,
  record?: (row: PaywallRow) => ResponseRecorder | undefined,
): Promise<PaywallRow> {
  const tenant = w.tenant;
  const service = body.serviceId ? await ownService(w.db, body.serviceId, tenant.id) : undefined;
  const target: Target = {
    targetType: body.targetType,
    targetUrl: body.targetUrl ?? null,
    targetRoute: body.targetRoute ?? null,
    serviceId: body.serviceId ?? null,
    networks: body.networks,
  };
  const sessions = sessionsOf(body.sessions) ?? { sessionsEnabled: false, sessionsMinDeposit: null };
  const issues = [
    ...targetIssues(target, service, body),
    ...sessionIssues(sessions, body.price, body.networks, body),
    ...maskedHeaderIssues(body.headers),
    ...outputExampleIssues(body.outputExample, body.outputSchema),
  ];
  if (issues.length > 0) throw invalid(issues);
  if (target.targetUrl) assertSafeUpstream("targetUrl", target.targetUrl, w.config);

  const id = newId("pw");
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
    headers: body.headers ? await sealHeaders(w.ring, { tenantId: tenant.id, paywallId: id }, body.headers) : null,
    queryParams: body.queryParams ?? null,
    cacheRules: body.cacheRules ?? null,
    inputSchema: body.inputSchema ?? null,
    outputSchema: body.outputSchema ?? null,
    outputExample: body.outputExample ?? null,
    ...sessions,
    createdAt: w.now,
    updatedAt: w.now,
    version: 1,
  };
  const outcome = await insertPaywallWithinCap(
    w.db,
    row,
    w.config.maxPaywallsPerTenant,
    service?.mode,
    record?.(row),
    auditOf(w, "paywall-created", row.name, row.slug),
  ).catch(conflictOnDuplicateSlug);
  if ("refused" in outcome) {
    if (outcome.refused === "service-mode") throw await staleServiceError(w.db, target, tenant.id, body);
    throw new ApiError(
      "BETA_LIMIT_PAYWALLS",
      `A tenant may hold at most ${w.config.maxPaywallsPerTenant} paywalls during the beta`,
    );
  }
  return row;
}

/**
 * Applies a valid `PaywallUpdate` to the tenant's paywall; with `versions` (If-Match) only to one of them. Returns the
 * paywall as it is after the write; with a recorder from `record`, as the answer was built before it.
 */
export async function updatePaywall(
  w: CatalogWriter,
  id: string,
  patch: PaywallUpdate,
  versions: readonly number[] | undefined,
  record?: (expected: PaywallRow) => ResponseRecorder | undefined,
): Promise<PaywallRow> {
  const tenant = w.tenant;
  const existing = assertOwned(await findPaywall(w.db, id), tenant.id, "Paywall");

  const target: Target = {
    targetType: patch.targetType ?? existing.targetType,
    targetUrl: patch.targetUrl !== undefined ? patch.targetUrl : existing.targetUrl,
    targetRoute: patch.targetRoute !== undefined ? patch.targetRoute : existing.targetRoute,
    serviceId: patch.serviceId !== undefined ? patch.serviceId : existing.serviceId,
    networks: patch.networks ?? existing.networks,
  };
  const service = target.serviceId ? await ownService(w.db, target.serviceId, tenant.id) : undefined;
  const { sessions: sentSessions, ...fields } = patch;
  const sessions = sessionsOf(sentSessions);
  const issues = [
    ...targetIssues(target, service, patch),
    ...sessionIssues(sessions ?? existing, patch.price ?? existing.price, target.networks, patch),
    ...maskedHeaderIssues(patch.headers, existing.headers),
    ...outputExampleIssues(
      patch.outputExample !== undefined ? patch.outputExample : existing.outputExample,
      patch.outputSchema !== undefined ? patch.outputSchema : existing.outputSchema,
    ),
  ];
  if (issues.length > 0) throw invalid(issues);
  if (patch.targetUrl) assertSafeUpstream("targetUrl", patch.targetUrl, w.config);
  const merchantWallet = patch.merchantWallet === undefined ? undefined : ownWallet(tenant, patch.merchantWallet);
  const headers =
    patch.headers === undefined
      ? undefined
      : patch.headers === null
        ? null
        : await sealHeaders(w.ring, { tenantId: tenant.id, paywallId: id }, patch.headers, existing.headers ?? []);

  // A bad request is refused as such whatever its tag; a stale tag then costs no write (the write checks it again).
  assertVersionMatches(existing, versions, "paywall");
  const set = {
    ...fields,
    ...sessions,
    targetUrl: target.targetType === "PROXY" ? target.targetUrl : null,
    targetRoute: target.targetType === "ROUTE" ? target.targetRoute : null,
    ...(merchantWallet === undefined ? {} : { merchantWallet }),
    ...(headers === undefined ? {} : { headers }),
    updatedAt: w.now,
  };
  // With a recorder the answer is stored in the write's own batch: it is built first, from the state read, and the
  // write applies only to that version.
  const expected = rowAfterUpdate(existing, set);
  const recorder = record?.(expected);
  const row = await updatePaywallRow(
    w.db,
    id,
    set,
    service && { serviceId: service.id, mode: service.mode },
    recorder ? [existing.version] : versions,
    recorder,
    auditOf(w, "paywall-updated", expected.name, changedFields({ ...fields, ...sessions }, existing)),
  ).catch(conflictOnDuplicateSlug);
  if (!row) {
    // Gone meanwhile, changed since the If-Match tag (or, with a recorder, since it was read), or (with a service)
    // the service's mode changed after the check.
    const current = await findPaywall(w.db, id);
    if (!current) throw new ApiError("NOT_FOUND", "Paywall not found");
    assertVersionMatches(current, versions, "paywall");
    if (recorder && current.version !== existing.version) {
      throw new ApiError("CONFLICT", "The paywall changed during the request; retry it");
    }
    if (!service) throw new ApiError("NOT_FOUND", "Paywall not found");
    throw await staleServiceError(w.db, target, tenant.id, patch);
  }
  return recorder ? expected : row;
}

/** Deletes the tenant's paywall; with `versions` (If-Match) only at one of them. */
export async function deletePaywall(
  w: CatalogWriter,
  id: string,
  versions: readonly number[] | undefined,
  recorder?: ResponseRecorder,
): Promise<void> {
  const existing = assertOwned(await findPaywall(w.db, id), w.tenant.id, "Paywall");
  assertVersionMatches(existing, versions, "paywall");
  if (!(await deletePaywallRow(w.db, id, versions, recorder, auditOf(w, "paywall-deleted", existing.name, existing.slug)))) {
    const current = await findPaywall(w.db, id);
    if (current) throw preconditionFailed("paywall", current.version);
    throw new ApiError("NOT_FOUND", "Paywall not found");
  }
}

/** Turns one of the tenant's paywalls on or off; `undefined` when the tenant has no paywall with this id. */
export async function enablePaywall(w: CatalogWriter, id: string, enabled: boolean): Promise<PaywallRow | undefined> {
  const existing = await findPaywall(w.db, id);
  const name = existing?.tenantId === w.tenant.id ? existing.name : id;
  return setPaywallEnabled(
    w.db,
    w.tenant.id,
    id,
    enabled,
    w.now,
    auditOf(w, enabled ? "paywall-enabled" : "paywall-disabled", name),
  );
}
