import { and, asc, count, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import {
  catalogVersions,
  type DiscoveryListingRow,
  discoveryListings,
  type PaywallRow,
  paywalls,
  type ServiceRow,
  services,
  siwxNonces,
  tenants,
} from "./schema.ts";

/** The tenant's wallets, who the 402s of its paywalls pay (x402: the paywall's merchantWallet; MPP: these). */
export interface Wallets {
  walletAddress: string;
  tempoWalletAddress: string | null;
}
const walletColumns = { walletAddress: tenants.walletAddress, tempoWalletAddress: tenants.tempoWalletAddress };

/** A service, its paywalls (newest first) and its tenant's wallets, in one round trip: its discovery files. */
export async function findDiscoveryService(
  db: Db,
  id: string,
): Promise<{ service: ServiceRow; paywalls: PaywallRow[]; wallets: Wallets } | undefined> {
  const [found, children] = await db.batch([
    db
      .select({ service: services, wallets: walletColumns })
      .from(services)
      .innerJoin(tenants, eq(tenants.id, services.tenantId))
      .where(eq(services.id, id))
      .limit(1),
    db.select().from(paywalls).where(eq(paywalls.serviceId, id)).orderBy(asc(paywalls.createdAt), asc(paywalls.id)),
  ]);
  const [row] = found;
  return row ? { service: row.service, wallets: row.wallets, paywalls: children } : undefined;
}

const discoveryState = (db: Db) =>
  db
    .select({ version: catalogVersions.version, ...walletColumns })
    .from(services)
    .innerJoin(tenants, eq(tenants.id, services.tenantId))
    .leftJoin(catalogVersions, eq(catalogVersions.tenantId, services.tenantId))
    .where(eq(services.id, sql.placeholder("id")))
    .limit(1)
    .prepare();

/** Built once per drizzle instance: every request to a service's MCP server reads its state first. */
const preparedStates = new WeakMap<Db, ReturnType<typeof discoveryState>>();

/**
 * What a service's discovery files are built from, in one small read: its tenant's catalog version (every write of
 * its services or paywalls moves it) and wallets. Equal states give equal files, so an isolate may keep what it built.
 * `undefined` when no such service.
 */
export async function findDiscoveryState(db: Db, id: string): Promise<string | undefined> {
  let query = preparedStates.get(db);
  if (!query) {
    query = discoveryState(db);
    preparedStates.set(db, query);
  }
  const row = await query.get({ id });
  return row ? [id, row.version ?? 0, row.walletAddress, row.tempoWalletAddress ?? ""].join("\n") : undefined;
}

// Discovery (docs/discovery.md): the payment origin's catalogue, facilitators' listing answers, SIWX nonces.

/**
 * The oldest `limit` enabled paywalls that have a service, across tenants, with their services, grouped by service
 * in the order of each service's oldest paywall: the root catalogue (each paywall gives at least one operation).
 */
export async function findCatalogue(
  db: Db,
  limit: number,
): Promise<{ service: ServiceRow; paywalls: PaywallRow[]; wallets: Wallets }[]> {
  const rows = await db
    .select({ paywall: paywalls, service: services, wallets: walletColumns })
    .from(paywalls)
    .innerJoin(services, eq(services.id, paywalls.serviceId))
    .innerJoin(tenants, eq(tenants.id, paywalls.tenantId))
    .where(eq(paywalls.enabled, true))
    .orderBy(asc(paywalls.createdAt), asc(paywalls.id))
    .limit(limit);
  const grouped = new Map<string, { service: ServiceRow; paywalls: PaywallRow[]; wallets: Wallets }>();
  for (const { paywall, service, wallets } of rows) {
    const entry = grouped.get(service.id) ?? { service, paywalls: [], wallets };
    entry.paywalls.push(paywall);
    grouped.set(service.id, entry);
  }
  return [...grouped.values()];
}

/** Services with at least one enabled paywall, oldest first, with how many are enabled: the root llms.txt. */
export async function findCatalogueServices(db: Db, limit: number) {
  // Spelled out: inside a single-table select drizzle writes `${services.id}` unqualified, which `p` would shadow.
  const enabledCount = sql<number>`(SELECT count(*) FROM "paywalls" p WHERE p."service_id" = "services"."id" AND p."enabled" = 1)`;
  const rows = await db
    .select({ id: services.id, name: services.name, description: services.description, paidRoutes: enabledCount })
    .from(services)
    .where(sql`${enabledCount} > 0`)
    .orderBy(asc(services.createdAt), asc(services.id))
    .limit(limit);
  return rows.map(({ paidRoutes, ...service }) => ({ service, paidRoutes: Number(paidRoutes) }));
}

/** How many of a tenant's paywalls have no service. */
export async function countPaywallsWithoutService(db: Db, tenantId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(paywalls)
    .where(and(eq(paywalls.tenantId, tenantId), isNull(paywalls.serviceId)));
  return row?.n ?? 0;
}

/** Records the listing status a facilitator returned for a paywall (the latest wins). */
export async function recordListing(db: Db, row: DiscoveryListingRow): Promise<void> {
  await db
    .insert(discoveryListings)
    .values(row)
    .onConflictDoUpdate({
      target: discoveryListings.paywallId,
      set: { status: row.status, reason: row.reason, facilitatorUrl: row.facilitatorUrl, updatedAt: row.updatedAt },
    });
}

export async function findListings(db: Db, paywallIds: readonly string[]): Promise<DiscoveryListingRow[]> {
  if (paywallIds.length === 0) return [];
  return db
    .select()
    .from(discoveryListings)
    .where(inArray(discoveryListings.paywallId, [...paywallIds]));
}

/**
 * Marks a Sign-In-With-X nonce used: `true` the first time, `false` if it was used already (one statement, so of two
 * concurrent requests with the same nonce exactly one wins). Nonces past their expiry are deleted in the same batch.
 */
export async function claimSiwxNonce(db: Db, nonce: string, expiresAt: Date, now: Date): Promise<boolean> {
  const [, inserted] = await db.batch([
    db.delete(siwxNonces).where(lt(siwxNonces.expiresAt, now)),
    db.insert(siwxNonces).values({ nonce, expiresAt }).onConflictDoNothing().returning({ nonce: siwxNonces.nonce }),
  ]);
  return inserted.length === 1;
}
