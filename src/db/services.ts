import { and, desc, eq, exists, gt, inArray, type SQL, sql } from "drizzle-orm";
import { selectCatalogVersion } from "./catalog-versions.ts";
import type { Db } from "./client.ts";
import { countOf } from "./counts.ts";
import { batchRecording, type ResponseRecorder } from "./idempotency.ts";
import type { Audit, Page } from "./page.ts";
import { changedJustNow } from "./page.ts";
import { type Mode, type PaywallRow, paywalls, type ServiceRow, services } from "./schema.ts";

export type NewService = typeof services.$inferInsert;
export type ServicePatch = Partial<Omit<NewService, "id" | "tenantId" | "createdAt">>;

const newestFirst = [desc(services.createdAt), desc(services.id)];

/** The service and its paywalls, in one round trip. */
export async function findServiceWithPaywalls(
  db: Db,
  id: string,
): Promise<{ service: ServiceRow; paywalls: PaywallRow[] } | undefined> {
  const [found, children] = await db.batch([
    db.select().from(services).where(eq(services.id, id)).limit(1),
    db.select().from(paywalls).where(eq(paywalls.serviceId, id)).orderBy(desc(paywalls.createdAt), desc(paywalls.id)),
  ]);
  const service = found[0];
  return service ? { service, paywalls: children } : undefined;
}

export async function findService(db: Db, id: string): Promise<ServiceRow | undefined> {
  const [row] = await db.select().from(services).where(eq(services.id, id)).limit(1);
  return row;
}

/** The tenant's services (of one mode), and their total: a kept count when unfiltered, else counted. */
function servicesWhere(tenantId: string, filter: { mode?: Mode | undefined }) {
  const conditions: SQL[] = [eq(services.tenantId, tenantId)];
  if (filter.mode) conditions.push(eq(services.mode, filter.mode));
  const where = and(...conditions);
  const total = filter.mode ? sql<number>`(SELECT count(*) FROM ${services} WHERE ${where})` : countOf(tenantId, "services");
  return { where, total };
}

/** The total of a page that came back empty: 0 on the first page, else read on its own (a page past the end). */
async function totalOfEmpty(db: Db, page: Page, total: SQL<number>): Promise<number> {
  if (page.offset === 0) return 0;
  return (await db.select({ n: total }).from(sql`(SELECT 1)`))[0]?.n ?? 0;
}

/**
 * A page of a tenant's services with their paywalls, newest first: two statements in one batch, the page
 * (carrying the total) and the page's paywalls. Only a page past the end needs a third, to learn the total.
 */
export async function findServicesPage(db: Db, tenantId: string, page: Page, filter: { mode?: Mode | undefined } = {}) {
  const { where, total } = servicesWhere(tenantId, filter);
  const pageIds = db
    .select({ id: services.id })
    .from(services)
    .where(where)
    .orderBy(...newestFirst)
    .limit(page.limit)
    .offset(page.offset);
  const [rows, children, [catalog]] = await db.batch([
    db
      .select({ service: services, total })
      .from(services)
      .where(where)
      .orderBy(...newestFirst)
      .limit(page.limit)
      .offset(page.offset),
    db.select().from(paywalls).where(inArray(paywalls.serviceId, pageIds)).orderBy(desc(paywalls.createdAt), desc(paywalls.id)),
    selectCatalogVersion(db, tenantId),
  ]);
  const byService = Map.groupBy(children, (p) => p.serviceId as string);
  const [first] = rows;
  const count = first ? first.total : await totalOfEmpty(db, page, total);
  return {
    total: count,
    items: rows.map(({ service }) => ({ service, paywalls: byService.get(service.id) ?? [] })),
    /** The tenant's catalog version the page was read at (the same batch). */
    catalogVersion: catalog?.version ?? 0,
  };
}

/** True while a service matching `where` exists (a recorder's `applied`). */
const someService = (db: Db, where: SQL | undefined) => exists(db.select({ one: sql`1` }).from(services).where(where));

/**
 * Inserts the service unless the tenant already holds `cap` services. The insert and the cap check run
 * in one atomic batch, so concurrent creates can never overshoot: the row is removed again if it was one too many.
 * `recorder` (an idempotency key's) stores the answer in the same batch, if the row stays.
 */
export async function insertServiceWithinCap(
  db: Db,
  row: NewService,
  cap: number,
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<ServiceRow | undefined> {
  const stays = someService(db, eq(services.id, row.id));
  const [[inserted], removed] = await batchRecording(
    db,
    [
      db.insert(services).values(row).returning(),
      db
        .delete(services)
        .where(and(eq(services.id, row.id), gt(countOf(row.tenantId, "services"), cap)))
        .returning({ id: services.id }),
      ...(audit ? [audit(stays)] : []),
    ],
    { recorder, applied: stays, at: "last" },
  );
  return removed.length > 0 ? undefined : inserted;
}

/** The service `id`, and (when `versions` is given, from an `If-Match`) only at one of these versions. */
const serviceAt = (id: string, versions: readonly number[] | undefined) =>
  versions ? and(eq(services.id, id), inArray(services.version, [...versions])) : eq(services.id, id);

/**
 * Updates the service (bumping its version) and reads its paywalls back, in one round trip. With `onlyIfPaywallsFit`
 * (the networks of a new mode), the update applies only if no paywall of the service holds another network at that
 * moment, so a paywall written concurrently cannot be orphaned; with `versions`, only while the service is at one of
 * them (the If-Match check is this statement's own condition). Otherwise nothing changes and `undefined` is returned.
 * `recorder` stores the answer in the same batch, exactly when the update applies.
 */
export async function updateServiceRow(
  db: Db,
  id: string,
  patch: ServicePatch,
  onlyIfPaywallsFit?: readonly string[],
  versions?: readonly number[],
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<{ service: ServiceRow; paywalls: PaywallRow[] } | undefined> {
  const where = onlyIfPaywallsFit
    ? and(
        serviceAt(id, versions),
        sql`NOT EXISTS (SELECT 1 FROM ${paywalls} AS p, json_each(p."networks") AS n WHERE p."service_id" = ${id} AND n.value NOT IN (${sql.join(
          onlyIfPaywallsFit.map((network) => sql`${network}`),
          sql`, `,
        )}))`,
      )
    : serviceAt(id, versions);
  const children = db
    .select()
    .from(paywalls)
    .where(eq(paywalls.serviceId, id))
    .orderBy(desc(paywalls.createdAt), desc(paywalls.id));
  const update = db
    .update(services)
    .set({ ...patch, version: sql`${services.version} + 1` })
    .where(where)
    .returning();
  const applied = { recorder, applied: someService(db, where), at: "first" } as const;
  if (audit) {
    const [[service], , rows] = await batchRecording(db, [update, audit(changedJustNow), children], applied);
    return service ? { service, paywalls: rows } : undefined;
  }
  const [[service], rows] = await batchRecording(db, [update, children], applied);
  return service ? { service, paywalls: rows } : undefined;
}

export async function findPaywallsOfService(db: Db, serviceId: string): Promise<PaywallRow[]> {
  return db.select().from(paywalls).where(eq(paywalls.serviceId, serviceId));
}

/**
 * Deletes the service (with `versions`, only while it is at one of them); its paywalls go with it in the same
 * statement (foreign key cascade). `recorder` stores the answer in the same batch, exactly when the delete applies.
 */
export async function deleteServiceRow(
  db: Db,
  id: string,
  versions?: readonly number[],
  recorder?: ResponseRecorder,
  audit?: Audit,
): Promise<boolean> {
  const where = serviceAt(id, versions);
  const remove = db.delete(services).where(where).returning({ id: services.id });
  const applied = { recorder, applied: someService(db, where), at: "first" } as const;
  if (audit) {
    const [, rows] = await batchRecording(db, [audit(someService(db, where)), remove], applied);
    return rows.length > 0;
  }
  const [rows] = await batchRecording(db, [remove], applied);
  return rows.length > 0;
}

/** Names of the tenant's newest `limit` services, for choosing one in a filter (no secrets selected). */
export async function listServiceNames(db: Db, tenantId: string, limit: number) {
  return db
    .select({ id: services.id, name: services.name, networks: services.networks })
    .from(services)
    .where(eq(services.tenantId, tenantId))
    .orderBy(...newestFirst)
    .limit(limit);
}
