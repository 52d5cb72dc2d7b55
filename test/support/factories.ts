// One factory per row kind, written straight to D1 (the API has its own tests): tenants, API keys, services, paywalls.
import { env } from "cloudflare:workers";
import { generateApiKey } from "../../src/core/keys/api-key.ts";
import { workerKeyStore } from "../../src/core/keys/key-object.ts";
import { SCOPES, type Scope } from "../../src/core/keys/scopes.ts";
import { insertKey } from "../../src/db/api-keys.ts";
import { getDb } from "../../src/db/client.ts";
import { type ApiKeyRow, type KeyStatus, paywalls, services, type Tenant } from "../../src/db/schema.ts";
import { insertTenant } from "../../src/db/tenants.ts";
import { newId, randomHex } from "../../src/lib/ids.ts";
import { registerApiKey } from "./canaries.ts";

export const db = () => getDb(env.DB);

/** What key changes work on, as the dashboard passes it: the database and the keys' Durable Objects. */
export const keys = () => workerKeyStore(db(), env);

export const randomWallet = () => `0x${randomHex(20)}`;

export async function createTenant(overrides: Partial<Tenant> = {}): Promise<Tenant> {
  const id = newId("ten");
  return insertTenant(db(), {
    id,
    email: `${id}@example.com`,
    name: `Tenant ${id}`,
    walletAddress: randomWallet(),
    tempoWalletAddress: randomWallet(),
    ...overrides,
  });
}

export interface KeyOptions {
  tenant?: Tenant;
  scopes?: Scope[];
  allowIps?: string[];
  status?: KeyStatus;
  expiresAt?: Date | null;
  name?: string;
}

/** A tenant (new unless given) and a key for it; `key` is the raw key, as the tenant would hold it. */
export async function createApiKey(options: KeyOptions = {}): Promise<{ key: string; row: ApiKeyRow; tenant: Tenant }> {
  const tenant = options.tenant ?? (await createTenant());
  const { key, keyHash, keyPrefix } = await generateApiKey();
  const id = newId("key");
  // The raw key and its hash must never appear in a response or a log line (see canaries.ts).
  registerApiKey(`API key ${id} (${options.name ?? "test key"}) of ${tenant.id}`, key, keyHash);
  const row = await insertKey(db(), {
    id,
    tenantId: tenant.id,
    name: options.name ?? "test key",
    keyHash,
    keyPrefix,
    scopes: options.scopes ?? [...SCOPES],
    status: options.status ?? "active",
    expiresAt: options.expiresAt ?? null,
    allowedIps: options.allowIps ?? [],
    revokedAt: options.status === "revoked" ? new Date() : null,
  });
  return { key, row, tenant };
}

/** A well-formed key that no tenant holds. */
export const unknownKey = () => `mpk_${randomHex(32)}`;

type NewServiceRow = typeof services.$inferInsert;
type NewPaywallRow = typeof paywalls.$inferInsert;

/** Inserts rows directly (one statement per row: D1 caps bound parameters per statement), in batches. */
export async function insertRows(table: "services", rows: NewServiceRow[]): Promise<void>;
export async function insertRows(table: "paywalls", rows: NewPaywallRow[]): Promise<void>;
export async function insertRows(table: "services" | "paywalls", rows: (NewServiceRow | NewPaywallRow)[]): Promise<void> {
  const d = db();
  for (let i = 0; i < rows.length; i += 100) {
    const chunk = rows.slice(i, i + 100);
    const statements = chunk.map((row) =>
      table === "services" ? d.insert(services).values(row as NewServiceRow) : d.insert(paywalls).values(row as NewPaywallRow),
    );
    await d.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]]);
  }
}

/** A minimal valid service row for direct insertion. */
export const serviceRow = (tenantId: string, id: string, overrides: Partial<NewServiceRow> = {}): NewServiceRow => ({
  id,
  tenantId,
  name: "direct",
  baseUrl: "https://api.example.com",
  authMethod: "none",
  authConfig: {},
  networks: ["base-sepolia"],
  mode: "testnet",
  categories: [],
  publicRoutes: [],
  siwxRoutes: [],
  ...overrides,
});

/** A minimal valid PROXY paywall row (no service) for direct insertion. */
export const paywallRow = (tenant: Tenant, id: string, overrides: Partial<NewPaywallRow> = {}): NewPaywallRow => ({
  id,
  tenantId: tenant.id,
  serviceId: null,
  slug: id.replace(/_/g, "-"),
  name: "direct",
  targetType: "PROXY",
  targetUrl: "https://api.example.com/x",
  price: "1",
  currency: "USDC",
  networks: ["base-sepolia"],
  merchantWallet: tenant.walletAddress,
  timeout: 60000,
  allowedMethods: ["GET"],
  allowedHeaders: [],
  fulfillmentMode: "PROXY",
  enabled: true,
  ...overrides,
});
