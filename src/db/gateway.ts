import { and, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { type PaywallRow, paywalls, type ServiceRow, services, signedUrls, tenants } from "./schema.ts";

export interface PaymentTarget {
  paywall: PaywallRow;
  service: ServiceRow;
  tenant: { walletAddress: string; tempoWalletAddress: string | null };
}

const targetColumns = {
  paywall: paywalls,
  service: services,
  tenant: { walletAddress: tenants.walletAddress, tempoWalletAddress: tenants.tempoWalletAddress },
};

/** A paywall with its service and the tenant's wallets, in one query. */
const targetQuery = (db: Db, where: SQL | undefined) =>
  db
    .select(targetColumns)
    .from(paywalls)
    .innerJoin(services, eq(services.id, paywalls.serviceId))
    .innerJoin(tenants, eq(tenants.id, paywalls.tenantId))
    .where(where)
    .limit(1);

const targetByUrl = (db: Db) =>
  targetQuery(
    db,
    and(eq(paywalls.serviceId, sql.placeholder("serviceId")), eq(paywalls.slug, sql.placeholder("slug"))),
  ).prepare();

/** Built once per drizzle instance: every buyer request (each 402 challenge included) runs this query. */
const preparedTargets = new WeakMap<Db, ReturnType<typeof targetByUrl>>();

/** The paywall behind a payment URL. */
export async function findPaymentTarget(db: Db, serviceId: string, slug: string): Promise<PaymentTarget | undefined> {
  let query = preparedTargets.get(db);
  if (!query) {
    query = targetByUrl(db);
    preparedTargets.set(db, query);
  }
  return query.get({ serviceId, slug });
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
