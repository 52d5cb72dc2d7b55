import { and, count, desc, eq, exists, gt, inArray, isNull, type SQL, sql } from "drizzle-orm";
import { selectCatalogVersion } from "./catalog-versions.ts";
import type { Db } from "./client.ts";
import { countOf, selectCountOf } from "./counts.ts";
import { batchRecording, type ResponseRecorder } from "./idempotency.ts";
import { type Audit, changedJustNow, type Page } from "./page.ts";
import { type Mode, type PaywallRow, paywalls, services } from "./schema.ts";

export type NewPaywall = typeof paywalls.$inferInsert;
export type PaywallPatch = Partial<Omit<NewPaywall, "id" | "tenantId" | "slug" | "createdAt">>;

export interface PaywallFilter {
  /** A service id, or `null` for paywalls without a service. */
  serviceId?: string | null | undefined;
  enabled?: boolean | undefined;
}

export async function findPaywall(db: Db, id: string): Promise<PaywallRow | undefined> {
  const [row] = await db.select().from(paywalls).where(eq(paywalls.id, id)).limit(1);
  return row;
}

/** A page of a tenant's paywalls, newest first, with the filtered total (kept count when unfiltered): one batch of two statements. */
export async function findPaywallsPage(db: Db, tenantId: string, page: Page, filter: PaywallFilter = {}) {
  const conditions: SQL[] = [eq(paywalls.tenantId, tenantId)];
  if (filter.serviceId === null) conditions.push(isNull(paywalls.serviceId));
  else if (filter.serviceId !== undefined) conditions.push(eq(paywalls.serviceId, filter.serviceId));
  if (filter.enabled !== undefined) conditions.push(eq(paywalls.enabled, filter.enabled));
  const where = and(...conditions);
  const unfiltered = conditions.length === 1;
  const [[total], rows, [catalog]] = await db.batch([
    unfiltered ? selectCountOf(db, tenantId, "paywalls") : db.select({ n: count() }).from(paywalls).where(where),
    db
      .select()
      .from(paywalls)
      .where(where)
      .orderBy(desc(paywalls.createdAt), desc(paywalls.id))
      .limit(page.limit)
      .offset(page.offset),
    selectCatalogVersion(db, tenantId),
  ]);
  // `catalogVersion`: the tenant's catalog version the page was read at (the same batch).
  return { total: total?.n ?? 0, rows, catalogVersion: catalog?.version ?? 0 };
}

/** True while a paywall matching `where` exists (a recorder's `applied`). */
const somePaywall = (db: Db, where: SQL | undefined) => exists(db.select({ one: sql`1` }).from(paywalls).where(where));

/** True while the service `serviceId` still has `mode` (a paywall's networks were checked against it). */
const serviceStillHasMode = (serviceId: string, mode: Mode) =>
  sql`(SELECT s."mode" FROM ${services} AS s WHERE s."id" = ${serviceId}) = ${mode}`;

/**
 * Inserts the paywall unless the tenant already holds `cap` paywalls; atomic like `insertServiceWithinCap`.
 * With `serviceMode` (the mode its networks were checked against), the row is also removed in the same batch
 * if the service's mode changed meanwhile: a concurrent mode change can never leave a paywall of the other
 * mode under a service. `recorder` (an idempotency key's) stores the answer in the same batch, if the row stays.
 */
export async function insertPaywallWithinCap(
  db: Db,
  row: NewPaywall,
  cap: number,
  serviceMode?: Mode,
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<{ row: PaywallRow } | { refused: "cap" | "service-mode" }> {
  const stays = somePaywall(db, eq(paywalls.id, row.id));
  const modeChanged = serviceMode && row.serviceId ? sql`NOT (${serviceStillHasMode(row.serviceId, serviceMode)})` : sql`0`;
  const [[inserted], strayed, removed] = await batchRecording(
    db,
    [
      db.insert(paywalls).values(row).returning(),
      db
        .delete(paywalls)
        .where(and(eq(paywalls.id, row.id), modeChanged))
        .returning({ id: paywalls.id }),
      db
        .delete(paywalls)
        .where(and(eq(paywalls.id, row.id), gt(countOf(row.tenantId, "paywalls"), cap)))
        .returning({ id: paywalls.id }),
      ...(audit ? [audit(stays)] : []),
    ],
    { recorder, applied: stays, at: "last" },
  );
  if (strayed.length > 0) return { refused: "service-mode" };
  return removed.length > 0 || !inserted ? { refused: "cap" } : { row: inserted };
}

/** The paywall `id`, and (when `versions` is given, from an `If-Match`) only at one of these versions. */
const paywallAt = (id: string, versions: readonly number[] | undefined) =>
  versions ? and(eq(paywalls.id, id), inArray(paywalls.version, [...versions])) : eq(paywalls.id, id);

/** Every write of a paywall bumps its version (its ETag); a trigger bumps its service's. */
const bumped = { version: sql`${paywalls.version} + 1` };

/**
 * Updates the paywall. With `serviceGuard` (the service it will belong to, and the mode its networks were
 * checked against), the update applies only while that service still has that mode; with `versions` (from an
 * `If-Match`), only while the paywall is at one of them. Otherwise nothing changes and `undefined` is returned,
 * as for an unknown id. `recorder` stores the answer in the same batch, exactly when the update applies.
 */
export async function updatePaywallRow(
  db: Db,
  id: string,
  patch: PaywallPatch,
  serviceGuard?: { serviceId: string; mode: Mode },
  versions?: readonly number[],
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<PaywallRow | undefined> {
  const where = serviceGuard
    ? and(paywallAt(id, versions), serviceStillHasMode(serviceGuard.serviceId, serviceGuard.mode))
    : paywallAt(id, versions);
  const update = db
    .update(paywalls)
    .set({ ...patch, ...bumped })
    .where(where)
    .returning();
  const applied = { recorder, applied: somePaywall(db, where), at: "first" } as const;
  const [[row]] = await (audit
    ? batchRecording(db, [update, audit(changedJustNow)], applied)
    : batchRecording(db, [update], applied));
  return row;
}

/** Deletes the paywall (with `versions`, only while it is at one of them); `recorder` as for an update. */
export async function deletePaywallRow(
  db: Db,
  id: string,
  versions?: readonly number[],
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<boolean> {
  const where = paywallAt(id, versions);
  const remove = db.delete(paywalls).where(where).returning({ id: paywalls.id });
  const applied = { recorder, applied: somePaywall(db, where), at: "first" } as const;
  if (audit) {
    const [, rows] = await batchRecording(db, [audit(somePaywall(db, where)), remove], applied);
    return rows.length > 0;
  }
  const [rows] = await batchRecording(db, [remove], applied);
  return rows.length > 0;
}

/** Turns one of the tenant's paywalls on or off; `undefined` when the tenant has no paywall with this id (nothing changes). */
export async function setPaywallEnabled(
  db: Db,
  tenantId: string,
  id: string,
  enabled: boolean,
  now: Date,
  audit?: Audit,
): Promise<PaywallRow | undefined> {
  const update = db
    .update(paywalls)
    .set({ enabled, updatedAt: now, ...bumped })
    .where(and(eq(paywalls.id, id), eq(paywalls.tenantId, tenantId)))
    .returning();
  const [[row]] = audit ? await db.batch([update, audit(changedJustNow)]) : [await update];
  return row;
}

/** Names of the tenant's newest `limit` paywalls, for choosing one in a filter (no secrets selected). */
export async function listPaywallNames(db: Db, tenantId: string, limit: number) {
  return db
    .select({ id: paywalls.id, name: paywalls.name, slug: paywalls.slug, serviceId: paywalls.serviceId })
    .from(paywalls)
    .where(eq(paywalls.tenantId, tenantId))
    .orderBy(desc(paywalls.createdAt), desc(paywalls.id))
    .limit(limit);
}
