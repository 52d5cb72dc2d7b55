import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
