import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const createdAt = () =>
  integer("created_at", { mode: "timestamp_ms" })
    .notNull()
    .$defaultFn(() => new Date());

export const tenants = sqliteTable("tenants", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  name: text("name").notNull(),
  walletAddress: text("wallet_address").notNull(),
  tempoWalletAddress: text("tempo_wallet_address"),
  createdAt: createdAt(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" })
    .notNull()
    .$defaultFn(() => new Date()),
});

export const KEY_STATUSES = ["active", "paused", "revoked"] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** SHA-256 of the raw key, lowercase hex. The raw key is never stored. */
    keyHash: text("key_hash").notNull().unique(),
    keyPrefix: text("key_prefix").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    status: text("status", { enum: KEY_STATUSES }).notNull().default("active"),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }),
    allowedIps: text("allowed_ips", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: createdAt(),
    lastUsedAt: integer("last_used_at", { mode: "timestamp_ms" }),
    revokedAt: integer("revoked_at", { mode: "timestamp_ms" }),
  },
  (t) => [index("api_keys_tenant_idx").on(t.tenantId, t.createdAt)],
);

export type Tenant = typeof tenants.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

export const MODES = ["testnet", "mainnet"] as const;
export type Mode = (typeof MODES)[number];

/** A stored authConfig: names in clear, every secret value as a `v1.…` ciphertext. */
export type StoredAuthConfig = Record<string, string>;
/** A stored paywall header: the value is a `v1.…` ciphertext. */
export interface StoredHeader {
  key: string;
  value: string;
}

export const services = sqliteTable(
  "services",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    baseUrl: text("base_url").notNull(),
    authMethod: text("auth_method").notNull(),
    authConfig: text("auth_config", { mode: "json" }).$type<StoredAuthConfig>().notNull(),
    networks: text("networks", { mode: "json" }).$type<string[]>().notNull(),
    mode: text("mode", { enum: MODES }).notNull(),
    contactEmail: text("contact_email"),
    categories: text("categories", { mode: "json" }).$type<string[]>().notNull(),
    docsHomepage: text("docs_homepage"),
    docsApiReference: text("docs_api_reference"),
    docsLlms: text("docs_llms"),
    xGuidance: text("x_guidance"),
    publicRoutes: text("public_routes", { mode: "json" }).$type<string[]>().notNull(),
    siwxRoutes: text("siwx_routes", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: createdAt(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" })
      .notNull()
      .$defaultFn(() => new Date()),
  },
  (t) => [
    index("services_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    index("services_tenant_mode_idx").on(t.tenantId, t.mode, t.createdAt, t.id),
  ],
);

export const paywalls = sqliteTable(
  "paywalls",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    serviceId: text("service_id").references(() => services.id, { onDelete: "cascade" }),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    targetType: text("target_type", { enum: ["PROXY", "ROUTE"] }).notNull(),
    targetUrl: text("target_url"),
    targetRoute: text("target_route"),
    /** Integer micro-USDC as a canonical decimal string. */
    price: text("price").notNull(),
    currency: text("currency", { enum: ["USDC"] }).notNull(),
    networks: text("networks", { mode: "json" }).$type<string[]>().notNull(),
    merchantWallet: text("merchant_wallet").notNull(),
    timeout: integer("timeout").notNull(),
    allowedMethods: text("allowed_methods", { mode: "json" }).$type<string[]>().notNull(),
    allowedHeaders: text("allowed_headers", { mode: "json" }).$type<string[]>().notNull(),
    fulfillmentMode: text("fulfillment_mode", { enum: ["PROXY", "SIGNED_URL"] }).notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    headers: text("headers", { mode: "json" }).$type<StoredHeader[]>(),
    queryParams: text("query_params", { mode: "json" }).$type<{ key: string; value: string }[]>(),
    cacheRules: text("cache_rules", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: createdAt(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" })
      .notNull()
      .$defaultFn(() => new Date()),
  },
  (t) => [
    uniqueIndex("paywalls_service_slug_unique").on(t.serviceId, t.slug),
    index("paywalls_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    index("paywalls_tenant_service_idx").on(t.tenantId, t.serviceId, t.createdAt, t.id),
    index("paywalls_tenant_enabled_idx").on(t.tenantId, t.enabled, t.createdAt, t.id),
    index("paywalls_service_idx").on(t.serviceId, t.createdAt, t.id),
  ],
);

export type ServiceRow = typeof services.$inferSelect;
export type PaywallRow = typeof paywalls.$inferSelect;

export const TRANSACTION_STATUSES = ["PENDING", "COMPLETED", "FAILED"] as const;
export const PROTOCOLS = ["x402", "mpp"] as const;
export const EVENT_TYPES = ["REQUEST", "SUCCESS", "ERROR"] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Payments written by the buyer-facing gateway. `paywall_id` and `service_id` keep their value after
 * the paywall or service is deleted: the history stays, its `Paywall` summary becomes null.
 */
export const transactions = sqliteTable(
  "transactions",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    paywallId: text("paywall_id").notNull(),
    serviceId: text("service_id"),
    protocol: text("protocol", { enum: PROTOCOLS }).notNull(),
    network: text("network").notNull(),
    amount: text("amount").notNull(),
    currency: text("currency", { enum: ["USDC"] }).notNull(),
    status: text("status", { enum: TRANSACTION_STATUSES }).notNull(),
    payerAddress: text("payer_address"),
    txHash: text("tx_hash"),
    failureReason: text("failure_reason"),
    createdAt: createdAt(),
    settledAt: integer("settled_at", { mode: "timestamp_ms" }),
  },
  (t) => [
    index("transactions_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    index("transactions_tenant_status_idx").on(t.tenantId, t.status, t.createdAt, t.id),
    index("transactions_tenant_paywall_idx").on(t.tenantId, t.paywallId, t.createdAt, t.id),
    index("transactions_tenant_service_idx").on(t.tenantId, t.serviceId, t.createdAt, t.id),
    index("transactions_tenant_network_idx").on(t.tenantId, t.network, t.createdAt, t.id),
    index("transactions_tenant_protocol_idx").on(t.tenantId, t.protocol, t.createdAt, t.id),
  ],
);

/** Lifecycle events of buyers' requests, written by the gateway. */
export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    paywallId: text("paywall_id").notNull(),
    serviceId: text("service_id"),
    eventType: text("event_type", { enum: EVENT_TYPES }).notNull(),
    statusCode: integer("status_code"),
    responseTime: integer("response_time"),
    amount: text("amount"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  (t) => [
    index("events_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    index("events_tenant_type_idx").on(t.tenantId, t.eventType, t.createdAt, t.id),
    index("events_tenant_paywall_idx").on(t.tenantId, t.paywallId, t.createdAt, t.id),
    index("events_tenant_service_idx").on(t.tenantId, t.serviceId, t.createdAt, t.id),
  ],
);

export type TransactionRow = typeof transactions.$inferSelect;
export type EventRow = typeof events.$inferSelect;

/**
 * Row counts per tenant, kept by triggers on every insert and delete (see migrations/0003): `services`,
 * `paywalls`, `transactions`, and `events:<eventType>`. Unfiltered totals and beta caps read one row here
 * instead of counting every row the tenant has.
 */
export const tenantCounts = sqliteTable(
  "tenant_counts",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    n: integer("n").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.kind] })],
);

/**
 * Signed URLs handed to buyers of `SIGNED_URL` paywalls after settlement: each may be fetched once before it
 * expires (the claim is one conditional UPDATE). The transaction it was paid by is named for the history.
 */
export const signedUrls = sqliteTable("signed_urls", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id, { onDelete: "cascade" }),
  paywallId: text("paywall_id").notNull(),
  transactionId: text("transaction_id").notNull(),
  expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  usedAt: integer("used_at", { mode: "timestamp_ms" }),
  createdAt: createdAt(),
});
