import { and, eq, gt, isNull } from "drizzle-orm";
import type { Db } from "./client.ts";
import { type PaywallRow, paywalls, type ServiceRow, services, signedUrls, tenants } from "./schema.ts";

export interface PaymentTarget {
  paywall: PaywallRow;
  service: ServiceRow;
  tenant: { walletAddress: string; tempoWalletAddress: string | null };
}

/** The paywall behind a payment URL, with its service and the tenant's wallets: one query. */
export async function findPaymentTarget(db: Db, serviceId: string, slug: string): Promise<PaymentTarget | undefined> {
  const [row] = await db
    .select({
      paywall: paywalls,
      service: services,
      tenant: { walletAddress: tenants.walletAddress, tempoWalletAddress: tenants.tempoWalletAddress },
    })
    .from(paywalls)
    .innerJoin(services, eq(services.id, paywalls.serviceId))
    .innerJoin(tenants, eq(tenants.id, paywalls.tenantId))
    .where(and(eq(paywalls.serviceId, serviceId), eq(paywalls.slug, slug)))
    .limit(1);
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
