import { and, asc, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import { BoundedCache } from "../lib/bounded-cache.ts";
import { type Db, getSessionDb } from "./client.ts";
import {
  catalogVersions,
  type PaywallRow,
  paymentStates,
  paywalls,
  type ServiceRow,
  services,
  signedUrls,
  tenants,
} from "./schema.ts";

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

const byUrl = (serviceId: string, slug: string) => and(eq(paywalls.serviceId, serviceId), eq(paywalls.slug, slug));

// The version map (docs/scale.md, "Reads on the paid path"): each isolate keeps the payment URLs' targets it read, each
// under its tenant's version in `payment_states` (migrations/0023) as of that read, and learns which tenants moved
// since from one read per PAYWALL_STATE_TTL_MS naming every tenant whose version moved past the highest it had seen.
// A kept target is answered until its tenant's version moves: a paywall seen once a minute costs no read of its own.

/** A target kept for its payment URL, with its tenant's version in the map when it was read (frozen: shared). */
interface KeptTarget {
  target: PaymentTarget;
  version: number;
}

/** At most this many targets kept, and this many tenants' versions noted, before the isolate starts afresh. */
const MAX_KEPT = 4096;
/** The most rows one read of the map takes; a longer list of moves starts the isolate afresh at its last row. */
const MAX_MOVES_READ = 1000;

const map = {
  /** Targets kept by payment URL (`serviceId\nslug`). */
  targets: new BoundedCache<KeptTarget>(MAX_KEPT, () => 1),
  /** The versions the tenants moved to since this isolate first read the map (bounded: `startAfresh`). */
  moved: new Map<string, number>(),
  /** The highest version read; `undefined` before the first read. */
  seen: undefined as number | undefined,
  readAt: Number.NEGATIVE_INFINITY,
  /** Set by a write through this isolate: the next read goes to the primary, so it sees that write. */
  atPrimary: false,
  /** The latest read (in flight or done), which requests within the bound share; dropped by `forgetPaymentStates`. */
  reading: undefined as { done: Promise<string | null> } | undefined,
  /** Moved by `startAfresh`: a target read before it is not kept (the moves that would have named it stale are gone). */
  epoch: 0,
};

/** Forgets every kept target and noted version; moves after `seen` are still read. */
function startAfresh(seen: number | undefined): void {
  map.epoch++;
  map.targets.clear();
  map.moved.clear();
  map.seen = seen;
}

/**
 * One read of the map: the tenants moved past `map.seen` (the isolate's first read only learns the highest version, as
 * it keeps nothing yet). Returns the session's bookmark.
 */
async function readMap(d1: D1Database, constraint: string): Promise<string | null> {
  const { db, bookmark } = getSessionDb(d1, constraint);
  if (map.seen === undefined) {
    const [row] = await db.select({ version: sql<number | null>`max(${paymentStates.version})` }).from(paymentStates);
    if (map.seen === undefined) map.seen = row?.version ?? 0;
    return bookmark();
  }
  const since = map.seen;
  const moves = await db
    .select()
    .from(paymentStates)
    .where(gt(paymentStates.version, since))
    .orderBy(asc(paymentStates.version))
    .limit(MAX_MOVES_READ);
  const last = moves.at(-1)?.version;
  if (moves.length === MAX_MOVES_READ || map.moved.size + moves.length > MAX_KEPT) startAfresh(last);
  else {
    for (const { tenantId, version } of moves) map.moved.set(tenantId, Math.max(version, map.moved.get(tenantId) ?? 0));
    if (last !== undefined && last > (map.seen ?? 0)) map.seen = last;
  }
  return bookmark();
}

/**
 * The map as of at most `ttlMs` ago (0: as of now), read once for every request that needs it in that time; the
 * bookmark of its read, so a target read after it reads a copy at least as new.
 */
async function currentMap(d1: D1Database, ttlMs: number): Promise<string | null> {
  const now = Date.now();
  if (ttlMs > 0 && map.reading && now - map.readAt < ttlMs) return map.reading.done;
  const constraint = map.atPrimary ? "first-primary" : "first-unconstrained";
  map.atPrimary = false;
  const reading = { done: readMap(d1, constraint) };
  map.reading = reading;
  map.readAt = now;
  reading.done.catch(() => {
    if (map.reading === reading) {
      map.reading = undefined;
      map.readAt = Number.NEGATIVE_INFINITY;
    }
  });
  return reading.done;
}

/**
 * Forgets what this isolate read of the map: its next payment request reads the map again, at the primary, so it is
 * answered with a write this isolate just took (called after a write through its management API or dashboard).
 */
export function forgetPaymentStates(): void {
  map.reading = undefined;
  map.readAt = Number.NEGATIVE_INFINITY;
  map.atPrimary = true;
}

/**
 * The paywall behind a payment URL. A target this isolate keeps is answered while its tenant's version has not moved
 * in the map; otherwise the row is read (with its tenant's version, in one query) and kept. Both reads go through D1
 * sessions: the map's on any copy, the row's on a copy at least as new as the map's read.
 *
 * `stateTtlMs` (the `PAYWALL_STATE_TTL_MS` setting): how long this isolate answers from a read of the map; a price, an
 * `enabled` flag or a wallet written by another isolate (or outside the API) is honoured within that bound. 0 reads
 * the map on every request.
 */
export async function findPaymentTarget(
  d1: D1Database,
  serviceId: string,
  slug: string,
  stateTtlMs = 0,
): Promise<PaymentTarget | undefined> {
  const url = `${serviceId}\n${slug}`;
  const bookmark = await currentMap(d1, stateTtlMs);
  const kept = map.targets.get(url);
  if (kept && (map.moved.get(kept.target.paywall.tenantId) ?? 0) <= kept.version) return kept.target;
  const epoch = map.epoch;
  const { db } = getSessionDb(d1, bookmark ?? "first-unconstrained");
  const [row] = await db
    .select({ ...targetColumns, stateVersion: paymentStates.version })
    .from(paywalls)
    .innerJoin(services, eq(services.id, paywalls.serviceId))
    .innerJoin(tenants, eq(tenants.id, paywalls.tenantId))
    .leftJoin(catalogVersions, eq(catalogVersions.tenantId, paywalls.tenantId))
    .leftJoin(paymentStates, eq(paymentStates.tenantId, paywalls.tenantId))
    .where(byUrl(serviceId, slug))
    .limit(1);
  if (!row) {
    map.targets.delete(url);
    return undefined;
  }
  const { stateVersion, ...target } = row;
  if (stateVersion === null || epoch !== map.epoch) map.targets.delete(url);
  else map.targets.set(url, { target: deepFreeze(target), version: stateVersion });
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
