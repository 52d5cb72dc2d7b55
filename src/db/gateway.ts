import { and, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import { BoundedCache } from "../lib/bounded-cache.ts";
import type { Db } from "./client.ts";
import { catalogVersions, type PaywallRow, paywalls, type ServiceRow, services, signedUrls, tenants } from "./schema.ts";

export interface PaymentTarget {
  paywall: PaywallRow;
  service: ServiceRow;
  tenant: { walletAddress: string; tempoWalletAddress: string | null };
  /** The tenant's catalog version the rows were read at (null for a tenant without one): names what is built from them. */
  catalogVersion: number | null;
}

const targetColumns = {
  paywall: paywalls,
  service: services,
  tenant: { walletAddress: tenants.walletAddress, tempoWalletAddress: tenants.tempoWalletAddress },
  catalogVersion: catalogVersions.version,
};

/** A paywall with its service, the tenant's wallets and its catalog version, in one query. */
const targetQuery = (db: Db, where: SQL | undefined) =>
  db
    .select(targetColumns)
    .from(paywalls)
    .innerJoin(services, eq(services.id, paywalls.serviceId))
    .innerJoin(tenants, eq(tenants.id, paywalls.tenantId))
    .leftJoin(catalogVersions, eq(catalogVersions.tenantId, paywalls.tenantId))
    .where(where)
    .limit(1);

const byUrl = and(eq(paywalls.serviceId, sql.placeholder("serviceId")), eq(paywalls.slug, sql.placeholder("slug")));

/** The paywall behind a payment URL, as `targetQuery` reads it. */
const targetByUrl = (db: Db) => targetQuery(db, byUrl).prepare();

/**
 * What a payment URL's target is as of now, in a few columns: the tenant's catalog version (every write of its services
 * and paywalls moves it, through any path: migrations/0019) and the tenant's wallets (not part of the catalog).
 */
const targetStateByUrl = (db: Db) =>
  db
    .select({
      catalogVersion: catalogVersions.version,
      walletAddress: tenants.walletAddress,
      tempoWalletAddress: tenants.tempoWalletAddress,
    })
    .from(paywalls)
    .innerJoin(tenants, eq(tenants.id, paywalls.tenantId))
    .leftJoin(catalogVersions, eq(catalogVersions.tenantId, paywalls.tenantId))
    .where(byUrl)
    .limit(1)
    .prepare();

/** Built once per drizzle instance: every buyer request (each 402 challenge included) runs these queries. */
const preparedTargets = new WeakMap<Db, { target: ReturnType<typeof targetByUrl>; state: ReturnType<typeof targetStateByUrl> }>();

/** Targets kept in this isolate under the state they were read at (frozen: shared by the requests that use them). */
const keptTargets = new BoundedCache<PaymentTarget>(1024, () => 1);

const stateName = (
  serviceId: string,
  slug: string,
  s: { catalogVersion: number | null; walletAddress: string; tempoWalletAddress: string | null },
) =>
  s.catalogVersion === null
    ? undefined
    : [serviceId, slug, s.catalogVersion, s.walletAddress, s.tempoWalletAddress ?? ""].join("\n");

/** What a payment URL's state read named (`undefined`: a tenant without a catalog version), and when it was read. */
interface KeptState {
  name: string | undefined;
  readAt: number;
}

/** Each payment URL's last state read in this isolate (`serviceId\nslug`), reused for `stateTtlMs` after it. */
const keptStates = new BoundedCache<KeptState>(4096, () => 1);

/**
 * Forgets every payment URL's kept state in this isolate: the next request of each reads its state again. Called after
 * a write through this isolate's management API or dashboard, so the isolate that took a write answers with it at once.
 */
export function forgetPaymentStates(): void {
  keptStates.clear();
}

/**
 * The paywall behind a payment URL. One narrow read names its state (above); the whole row is read only when this
 * isolate keeps no target of that state, and kept under the state it was read at, so a kept target is only ever
 * answered for the very rows it was built from.
 *
 * `stateTtlMs` (the `PAYWALL_STATE_TTL_MS` setting): for that long after a state read, this isolate names the URL's
 * state from that read and makes no D1 statement at all; a price, an `enabled` flag or a wallet written by another
 * isolate (or outside the API) is honoured within that bound. 0 reads the state on every request.
 */
export async function findPaymentTarget(
  db: Db,
  serviceId: string,
  slug: string,
  stateTtlMs = 0,
): Promise<PaymentTarget | undefined> {
  const url = `${serviceId}\n${slug}`;
  const now = Date.now();
  const recent = stateTtlMs > 0 ? keptStates.get(url) : undefined;
  if (recent && now - recent.readAt < stateTtlMs && recent.name !== undefined) {
    const kept = keptTargets.get(recent.name);
    if (kept) return kept;
  }
  let queries = preparedTargets.get(db);
  if (!queries) {
    queries = { target: targetByUrl(db), state: targetStateByUrl(db) };
    preparedTargets.set(db, queries);
  }
  const state = await queries.state.get({ serviceId, slug });
  if (!state) {
    keptStates.delete(url);
    return undefined;
  }
  const name = stateName(serviceId, slug, state);
  keptStates.set(url, { name, readAt: now });
  const kept = name === undefined ? undefined : keptTargets.get(name);
  if (kept) return kept;
  const target = await queries.target.get({ serviceId, slug });
  if (!target) return undefined;
  const readName = stateName(serviceId, slug, { catalogVersion: target.catalogVersion, ...target.tenant });
  if (readName !== undefined) {
    keptTargets.set(readName, deepFreeze(target));
    keptStates.set(url, { name: readName, readAt: now });
  }
  return target;
}

/** Freezes a value and everything it holds. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** The paywall a signed URL was paid for (it may have been deleted or detached from its service since). */
export async function findPaymentTargetOfPaywall(db: Db, paywallId: string): Promise<PaymentTarget | undefined> {
  const [row] = await targetQuery(db, eq(paywalls.id, paywallId));
  return row;
}

export type NewSignedUrl = typeof signedUrls.$inferInsert;

export async function insertSignedUrl(db: Db, row: NewSignedUrl): Promise<void> {
  await db.insert(signedUrls).values(row);
}

/**
 * Marks a signed URL used, if it is unused and unexpired: one conditional UPDATE, so of two concurrent
 * fetches exactly one gets the row back.
 */
export async function claimSignedUrl(db: Db, id: string, now: Date) {
  const [row] = await db
    .update(signedUrls)
    .set({ usedAt: now })
    .where(and(eq(signedUrls.id, id), isNull(signedUrls.usedAt), gt(signedUrls.expiresAt, now)))
    .returning();
  return row;
}
