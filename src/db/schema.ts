import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const timestamp = (name: string) =>
  integer(name, { mode: "timestamp_ms" })
    .notNull()
    .$defaultFn(() => new Date());
const createdAt = () => timestamp("created_at");
const updatedAt = () => timestamp("updated_at");
/** Bumped by every write of the row (and of a service's paywalls): the resource's strong ETag is `"v<version>"`. */
const version = () => integer("version").notNull().default(1);

export const tenants = sqliteTable(
  "tenants",
  {
    id: text("id").primaryKey(),
    // A contact address, not an identity (sign-in is by wallet or by a link the operator makes for the tenant): two
    // accounts may share one, so sign-up never tells a stranger that an e-mail has an account here.
    email: text("email").notNull(),
    name: text("name").notNull(),
    walletAddress: text("wallet_address").notNull(),
    tempoWalletAddress: text("tempo_wallet_address"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // Dashboard sign-in finds the tenant by either wallet, compared case-insensitively; the operator CLI looks e-mails up.
  (t) => [
    index("tenants_email_idx").on(t.email),
    index("tenants_wallet_idx").on(sql`lower(${t.walletAddress})`),
    index("tenants_tempo_wallet_idx").on(sql`lower(${t.tempoWalletAddress})`),
  ],
);

/** The owning tenant: deleting a tenant deletes what it owns. */
const tenantId = () =>
  text("tenant_id")
    .notNull()
    .references(() => tenants.id, { onDelete: "cascade" });

export const KEY_STATUSES = ["active", "paused", "revoked"] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: tenantId(),
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
    tenantId: tenantId(),
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
    updatedAt: updatedAt(),
    version: version(),
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
    tenantId: tenantId(),
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
    /** Discovery (docs/discovery.md): JSON Schema of the query (GET) or JSON body, of the answer, and an answer. */
    inputSchema: text("input_schema", { mode: "json" }).$type<Record<string, unknown>>(),
    outputSchema: text("output_schema", { mode: "json" }).$type<Record<string, unknown>>(),
    outputExample: text("output_example", { mode: "json" }).$type<Record<string, unknown> | unknown[]>(),
    /** Sessions (docs/sessions.md): whether the paywall's 402 also offers a channel paid by vouchers; off by default. */
    sessionsEnabled: integer("sessions_enabled", { mode: "boolean" }).notNull().default(false),
    /** The least deposit a session opens with, integer micro-USDC as a canonical decimal string (null: the price). */
    sessionsMinDeposit: text("sessions_min_deposit"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    version: version(),
  },
  (t) => [
    uniqueIndex("paywalls_service_slug_unique").on(t.serviceId, t.slug),
    index("paywalls_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    index("paywalls_tenant_service_idx").on(t.tenantId, t.serviceId, t.createdAt, t.id),
    index("paywalls_tenant_enabled_idx").on(t.tenantId, t.enabled, t.createdAt, t.id),
    index("paywalls_service_idx").on(t.serviceId, t.createdAt, t.id),
    // The payment origin's root catalogue: enabled paywalls, oldest first, across tenants (docs/discovery.md).
    index("paywalls_enabled_created_idx").on(t.enabled, t.createdAt, t.id),
  ],
);

export type ServiceRow = typeof services.$inferSelect;
export type PaywallRow = typeof paywalls.$inferSelect;

export const TRANSACTION_STATUSES = ["PENDING", "COMPLETED", "FAILED"] as const;
/** The tokens buyers pay in (6 decimals each): USDC, and pathUSD on Tempo's testnet. */
export const TOKENS = ["USDC", "pathUSD"] as const;
export type Token = (typeof TOKENS)[number];
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
    tenantId: tenantId(),
    paywallId: text("paywall_id").notNull(),
    serviceId: text("service_id"),
    protocol: text("protocol", { enum: PROTOCOLS }).notNull(),
    network: text("network").notNull(),
    amount: text("amount").notNull(),
    /** The token the buyer paid in (the network's: pathUSD on tempo-testnet, else USDC). */
    currency: text("currency", { enum: TOKENS }).notNull(),
    status: text("status", { enum: TRANSACTION_STATUSES }).notNull(),
    payerAddress: text("payer_address"),
    txHash: text("tx_hash"),
    failureReason: text("failure_reason"),
    /** A session's settlement: the channel whose charged vouchers this transaction moved (null: a payment per call). */
    channelId: text("channel_id"),
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
    // The dashboard finds a payment by its transfer's hash (the Payment-Reference a buyer holds).
    index("transactions_tenant_hash_idx").on(t.tenantId, t.txHash),
  ],
);

/** Lifecycle events of buyers' requests, written by the gateway. */
export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    tenantId: tenantId(),
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

export const CHANNEL_STATUSES = ["OPEN", "CLOSING", "CLOSED"] as const;
export type ChannelStatus = (typeof CHANNEL_STATUSES)[number];

/**
 * Sessions' payment channels, the read model of their Durable Objects (src/core/sessions/): written only from the
 * payment-records queue, a row replaced only by a later state of its channel (`seq`, the object's count of its moves).
 * Amounts are integer micro-units of the token: `charged` by vouchers, `claimed` on chain, `settled` to the wallet.
 */
export const channels = sqliteTable(
  "channels",
  {
    /** The channel's id on chain (lowercase hex), unique per network. */
    id: text("id").primaryKey(),
    tenantId: tenantId(),
    paywallId: text("paywall_id").notNull(),
    serviceId: text("service_id"),
    protocol: text("protocol", { enum: PROTOCOLS }).notNull(),
    network: text("network").notNull(),
    currency: text("currency", { enum: TOKENS }).notNull(),
    payerAddress: text("payer_address").notNull(),
    deposit: text("deposit").notNull(),
    charged: text("charged").notNull(),
    claimed: text("claimed").notNull(),
    settled: text("settled").notNull(),
    status: text("status", { enum: CHANNEL_STATUSES }).notNull(),
    seq: integer("seq").notNull(),
    openedAt: integer("opened_at", { mode: "timestamp_ms" }).notNull(),
    lastCallAt: integer("last_call_at", { mode: "timestamp_ms" }),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    index("channels_tenant_opened_idx").on(t.tenantId, t.openedAt, t.id),
    index("channels_tenant_status_idx").on(t.tenantId, t.status, t.openedAt, t.id),
  ],
);

export type ChannelRow = typeof channels.$inferSelect;
export type NewChannel = typeof channels.$inferInsert;

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
    tenantId: tenantId(),
    kind: text("kind").notNull(),
    n: integer("n").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.kind] })],
);

/**
 * Each tenant's catalog version (migrations/0019): bumped by triggers on every insert, update and delete of its services
 * and paywalls. The API keeps serialized pages of the services and paywalls lists per isolate under it, so a list read
 * costs one point read while nothing changed.
 */
export const catalogVersions = sqliteTable("catalog_versions", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  version: integer("version").notNull().default(0),
});

/**
 * The payment gateway's version map (migrations/0023): one row per tenant, its `version` drawn from one sequence over
 * every tenant and moved by triggers whenever what a payment URL is answered with changes: the tenant's catalog
 * version (any write of its services or paywalls), its wallets, or the tenant's deletion (the row outlives the tenant,
 * so an isolate still hears of it). An isolate reads only the rows moved since the highest version it has seen.
 */
export const paymentStates = sqliteTable(
  "payment_states",
  {
    tenantId: text("tenant_id").primaryKey(),
    version: integer("version").notNull(),
  },
  (t) => [index("payment_states_version_idx").on(t.version)],
);

// ---------------------------------------------------------------------------------------------------------------
// Dashboard: sessions, sign-in nonces and links, and the audit trail of key changes

/**
 * A dashboard session. `id` is the SHA-256 of the random id in the cookie (the cookie value itself is never
 * stored). A session idles out at `lastSeenAt` + 12 h and ends at `expiresAt` (created + 7 days) or when
 * revoked (sign-out). `tenantId` is null only while a new wallet signs up (`signupWallet` holds it until the
 * sign-up form creates the tenant).
 */
export const dashboardSessions = sqliteTable(
  "dashboard_sessions",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").references(() => tenants.id, { onDelete: "cascade" }),
    signupWallet: text("signup_wallet"),
    createdAt: createdAt(),
    lastSeenAt: integer("last_seen_at", { mode: "timestamp_ms" }).notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
    revokedAt: integer("revoked_at", { mode: "timestamp_ms" }),
    /** Where the session was started: the client's IP address, its browser (User-Agent, cut to 300 characters), and how. */
    ip: text("ip"),
    userAgent: text("user_agent"),
    /** `link` (a one-time sign-in link) or the wallet address that signed in with Ethereum. */
    signedInWith: text("signed_in_with"),
  },
  (t) => [index("dashboard_sessions_tenant_idx").on(t.tenantId), index("dashboard_sessions_expires_idx").on(t.expiresAt)],
);

/**
 * Sign-In with Ethereum nonces issued by the server: each is used once (deleted when used) and expires after
 * 5 minutes. `purpose` tells a sign-in nonce from one that confirms a wallet change.
 */
export const siweNonces = sqliteTable(
  "siwe_nonces",
  {
    nonce: text("nonce").primaryKey(),
    purpose: text("purpose").notNull(),
    createdAt: createdAt(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("siwe_nonces_expires_idx").on(t.expiresAt)],
);

/** One-time sign-in links made by an operator (or `npm run dev`): only the SHA-256 of the token is stored. */
export const signInLinks = sqliteTable(
  "sign_in_links",
  {
    tokenHash: text("token_hash").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
    usedAt: integer("used_at", { mode: "timestamp_ms" }),
  },
  (t) => [index("sign_in_links_tenant_idx").on(t.tenantId), index("sign_in_links_expires_idx").on(t.expiresAt)],
);

export const KEY_EVENT_ACTIONS = ["created", "paused", "resumed", "edited", "revoked", "deleted", "rolled"] as const;
export type KeyEventAction = (typeof KEY_EVENT_ACTIONS)[number];
/** `dev-runner`: `npm run dev -- --payments` setting up its demo paywall with a key of its own (src/admin/commands.ts). */
export const KEY_EVENT_ACTORS = ["dashboard", "operator-cli", "dev-runner"] as const;
export type KeyEventActor = (typeof KEY_EVENT_ACTORS)[number];

/**
 * The audit trail of key changes, written in the same batch as the change. `keyId` has no foreign key: the
 * events of a deleted key stay; `keyName` and `keyPrefix` are copied so they stay readable.
 */
export const keyEvents = sqliteTable(
  "key_events",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    keyId: text("key_id").notNull(),
    keyName: text("key_name").notNull(),
    keyPrefix: text("key_prefix").notNull(),
    action: text("action", { enum: KEY_EVENT_ACTIONS }).notNull(),
    actor: text("actor", { enum: KEY_EVENT_ACTORS }).notNull(),
    ip: text("ip"),
    createdAt: createdAt(),
  },
  (t) => [index("key_events_tenant_created_idx").on(t.tenantId, t.createdAt, t.id)],
);

export const ACCOUNT_EVENT_ACTORS = ["dashboard", "api", "operator-cli"] as const;
export type AccountEventActor = (typeof ACCOUNT_EVENT_ACTORS)[number];

/**
 * The audit trail of everything else that happens to an account: sign-ins and sign-outs, profile and wallet changes,
 * service and paywall changes (through the dashboard or the API). Written in the same batch as the change (sign-ins:
 * with the session). `subject` names what changed as it was then (a name, a wallet), `detail` says more (the browser
 * of a sign-in, the fields of a change). Key changes have their own table (`key_events`); the Activity page reads both.
 */
export const accountEvents = sqliteTable(
  "account_events",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    action: text("action").notNull(),
    subject: text("subject"),
    detail: text("detail"),
    actor: text("actor", { enum: ACCOUNT_EVENT_ACTORS }).notNull(),
    ip: text("ip"),
    createdAt: createdAt(),
  },
  (t) => [index("account_events_tenant_created_idx").on(t.tenantId, t.createdAt, t.id)],
);

/**
 * Messages a dashboard page shows once after a redirect (Post/Redirect/Get): the new raw key after "Create key" or
 * "Roll key". The body is encrypted with the key ring (it can hold a secret), bound to its session; reading it deletes it,
 * and it expires after 10 minutes unread.
 */
export const dashboardFlashes = sqliteTable(
  "dashboard_flashes",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    body: text("body").notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("dashboard_flashes_expires_idx").on(t.expiresAt)],
);

/**
 * One-time tokens of the dashboard's create forms (src/dashboard/form-token.tsx): the first post of a token claims it
 * (the primary key makes that single-use under concurrency) and records where it went; another post of it goes there.
 */
export const dashboardFormTokens = sqliteTable(
  "dashboard_form_tokens",
  {
    /** The session's row id (the SHA-256 of its cookie). */
    sessionId: text("session_id").notNull(),
    token: text("token").notNull(),
    /** The page the first post redirected to; null while it runs. */
    location: text("location"),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.token] }), index("dashboard_form_tokens_expires_idx").on(t.expiresAt)],
);

export type DashboardSessionRow = typeof dashboardSessions.$inferSelect;
export type AccountEventRow = typeof accountEvents.$inferSelect;
export type KeyEventRow = typeof keyEvents.$inferSelect;

/**
 * Per-UTC-day totals, kept by triggers on every insert, update and delete (see migrations/0005): `revenue` sums the
 * amounts of COMPLETED transactions (integer micro-USDC, added once, when the transaction completes, to the day it was
 * created), `requests` / `successes` / `errors` count events by type. One row per tenant, scope and day; `scope` is
 * `tenant` (all of the tenant's records), `paywall:<id>` or `service:<id>`. The dashboard's charts read at most one row
 * per day here instead of the tenant's history.
 */
export const dailyStats = sqliteTable(
  "daily_stats",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    scope: text("scope").notNull(),
    /** UTC date, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    requests: integer("requests").notNull().default(0),
    successes: integer("successes").notNull().default(0),
    errors: integer("errors").notNull().default(0),
    /** SUCCESS events of paywalls whose answers are cached: answered from the edge cache / by the upstream (0014). */
    cacheHits: integer("cache_hits").notNull().default(0),
    cacheMisses: integer("cache_misses").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.scope, t.day] })],
);

/**
 * Completed revenue per UTC day and network (migrations/0018), kept by triggers on `transactions` in the same three
 * scopes as `daily_stats`: what the dashboard's per-token totals and revenue chart read, whatever the size of the
 * history. The network tells the token (amounts of two tokens are never added) and the protocol.
 */
export const dailyRevenue = sqliteTable(
  "daily_revenue",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    scope: text("scope").notNull(),
    /** UTC date, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    network: text("network").notNull(),
    /** Integer micro-units of the network's token (SQLite's 64-bit integer); read it as text to keep every digit. */
    amount: integer("amount").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.scope, t.day, t.network] })],
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

export const IDEMPOTENCY_STATES = ["in_progress", "done"] as const;

/**
 * Idempotency keys of writes under `/v1`, per tenant, kept 24 hours (`expiresAt`). A request claims its key
 * (`in_progress`, with a lease until `leaseUntil` held by `claimToken`); the handler's own write batch turns the claim
 * into `done` with the response it sends (status, masked body, replayed headers), so the write and its stored answer
 * commit together. `method`, `path` and `bodyHash` (SHA-256 of the canonical JSON body) tell a retry from a reuse.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    bodyHash: text("body_hash").notNull(),
    state: text("state", { enum: IDEMPOTENCY_STATES }).notNull(),
    claimToken: text("claim_token").notNull(),
    leaseUntil: integer("lease_until", { mode: "timestamp_ms" }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    responseHeaders: text("response_headers", { mode: "json" }).$type<Record<string, string>>(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] }), index("idempotency_keys_expires_idx").on(t.expiresAt)],
);

export type IdempotencyRecord = typeof idempotencyKeys.$inferSelect;

/**
 * What the gateway needs to settle a PENDING payment from the chain when the request that started it cannot (the
 * settlement's outcome was unknown, or the invocation ended early): written with the PENDING transaction, deleted
 * with its outcome (both in the same batch). `reference` is the x402 authorization's EIP-3009 nonce, or the MPP
 * transaction's hash (known before it is sent); `validBefore` is when the money can no longer move (the
 * authorization's `validBefore`, the Tempo transaction's `validBefore`). Read by the Cron sweep (src/gateway/sweep.ts).
 */
export const pendingPayments = sqliteTable("pending_payments", {
  transactionId: text("transaction_id").primaryKey(),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id, { onDelete: "cascade" }),
  reference: text("reference").notNull(),
  validBefore: integer("valid_before", { mode: "timestamp_ms" }).notNull(),
  /** The token paid in and the address it pays (the paywall's at the time of payment): what a transfer must match. */
  asset: text("asset").notNull(),
  payTo: text("pay_to").notNull(),
  /**
   * x402: what the sweep needs to send the settlement itself (the facilitator, the signed payment and its
   * requirements), sealed with the key ring; NULL for MPP and for rows written before migration 0020. Used only for a
   * payment whose upstream answered and whose request never recorded an outcome (docs/gateway.md, "The payment sweep").
   */
  settlement: text("settlement"),
  /** When the chain was last asked about it, and how often (the sweep takes the least recently checked first). */
  checkedAt: integer("checked_at", { mode: "timestamp_ms" }),
  attempts: integer("attempts").notNull().default(0),
  createdAt: createdAt(),
});

// ---------------------------------------------------------------------------------------------------------------
// Discovery (docs/discovery.md): what facilitators said about listing a paywall, and used SIWX sign-in nonces

/**
 * The last Bazaar listing status a facilitator returned for a paywall (`EXTENSION-RESPONSES` on settle): `success`,
 * `processing` or `rejected` (with its reason). One row per paywall, replaced by every settlement that carries one.
 */
export const discoveryListings = sqliteTable("discovery_listings", {
  paywallId: text("paywall_id")
    .primaryKey()
    .references(() => paywalls.id, { onDelete: "cascade" }),
  tenantId: tenantId(),
  status: text("status").notNull(),
  reason: text("reason"),
  facilitatorUrl: text("facilitator_url").notNull(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});

/**
 * Sign-In-With-X nonces already used at the gateway: a nonce is accepted once, until `expiresAt` (when its message
 * is too old to be accepted anyway). Expired rows are deleted by later claims.
 */
export const siwxNonces = sqliteTable(
  "siwx_nonces",
  {
    nonce: text("nonce").primaryKey(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("siwx_nonces_expires_idx").on(t.expiresAt)],
);

export type DiscoveryListingRow = typeof discoveryListings.$inferSelect;

/**
 * The answer a gateway payment bought, kept so that the same payment presented again gets it again instead of a
 * second charge or a refusal (src/gateway/pipeline/known.ts). Written with the payment's `start` (the claim: which request it
 * pays for, which credential, under which retry key) and moved only by the ledger's own batches: `complete` stores the
 * answer, `leaveUnknown` stores it unservable (the transaction is still PENDING), `fail` deletes the row. An answer is
 * served only while its transaction is COMPLETED and the row unexpired. `answer` is the buyer's status, headers and
 * body, sealed with the key ring (AAD: tenant and transaction); NULL while the request is in flight, or when the
 * answer was over the kept size (`answered_at` set). Rows past `expires_at` are deleted by the hourly cleanup.
 */
export const paidAnswers = sqliteTable(
  "paid_answers",
  {
    transactionId: text("transaction_id").primaryKey(),
    tenantId: tenantId(),
    /**
     * The retry key of a payment that can be presented again with a new credential: x402's `payment-identifier` (per
     * payer), MPP's challenge id; SHA-256 hex. NULL for an x402 payment without one. One payment per key.
     */
    paymentKey: text("payment_key").unique(),
    /** SHA-256 hex of the request the payment was made for: method, path and query, body. */
    fingerprint: text("fingerprint").notNull(),
    /** What identifies the credential itself: SHA-256 hex of the x402 signature; the MPP transaction's hash. */
    credential: text("credential").notNull(),
    /**
     * SHA-256 hex of what only the buyer sent with the payment, never on chain (src/gateway/paid-answer.ts
     * `buyerProof`): the stored answer is served again only to a request carrying the same. NULL when the payment
     * carried no such secret: its answer is then never served again.
     */
    buyerProof: text("buyer_proof"),
    answer: text("answer"),
    /** When the request that made the payment finished with it (its answer stored, or too large to keep). */
    answeredAt: integer("answered_at", { mode: "timestamp_ms" }),
    /** Until when a copy of the payment waits for that request (its upstream call and settlement). */
    ownerUntil: integer("owner_until", { mode: "timestamp_ms" }).notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("paid_answers_expires_idx").on(t.expiresAt)],
);

export type PaidAnswerRow = typeof paidAnswers.$inferSelect;
// Webhooks: tenants' endpoints, the outbox of deliveries (one row per event and endpoint), and each attempt

/** The events an endpoint can subscribe to. A `test` event is sent on demand only. */
export const WEBHOOK_EVENT_TYPES = ["transaction.completed", "transaction.failed", "transaction.pending"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * A tenant's webhook endpoint. `secret` is the signing secret (`whsec_…`) sealed with the secret box; after a roll
 * the previous one stays valid (deliveries are signed with both) until `previousSecretExpiresAt`. The platform
 * disables an endpoint after a run of failed attempts (`consecutiveFailures`, `disabledReason`); the tenant
 * re-enables it.
 */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    tenantId: tenantId(),
    url: text("url").notNull(),
    description: text("description"),
    events: text("events", { mode: "json" }).$type<WebhookEventType[]>().notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    disabledReason: text("disabled_reason"),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: integer("previous_secret_expires_at", { mode: "timestamp_ms" }),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("webhook_endpoints_tenant_created_idx").on(t.tenantId, t.createdAt, t.id)],
);

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * The outbox and the delivery log: one row per event and endpoint, written in the same batch as the ledger move that
 * causes the event (or by a test send). `id` is the `webhook-id` every attempt carries. `payload` is the body as first
 * sent (every retry sends the same bytes); `nextAttemptAt` is when the next attempt is due (null: at once).
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    tenantId: tenantId(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventType: text("event_type").notNull(),
    transactionId: text("transaction_id"),
    payload: text("payload"),
    status: text("status", { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastAttemptAt: integer("last_attempt_at", { mode: "timestamp_ms" }),
    nextAttemptAt: integer("next_attempt_at", { mode: "timestamp_ms" }),
    responseStatus: integer("response_status"),
    latencyMs: integer("latency_ms"),
    responseBody: text("response_body"),
    error: text("error"),
    createdAt: createdAt(),
  },
  (t) => [
    index("webhook_deliveries_endpoint_created_idx").on(t.endpointId, t.createdAt, t.id),
    index("webhook_deliveries_status_due_idx").on(t.status, t.nextAttemptAt),
  ],
);

/** Every attempt of a delivery: when, how long, what the endpoint answered (first bytes), or why it failed. */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    ok: integer("ok", { mode: "boolean" }).notNull(),
    responseStatus: integer("response_status"),
    latencyMs: integer("latency_ms"),
    responseBody: text("response_body"),
    error: text("error"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
