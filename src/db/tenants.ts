import { desc, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client.ts";
import { type Tenant, tenants } from "./schema.ts";

export type NewTenant = typeof tenants.$inferInsert;

export async function insertTenant(db: Db, row: NewTenant): Promise<Tenant> {
  const [inserted] = await db.insert(tenants).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

export async function listTenants(db: Db): Promise<Tenant[]> {
  return db.select().from(tenants).orderBy(desc(tenants.createdAt), desc(tenants.id));
}

/**
 * Inserts the tenant unless another tenant has its e-mail: `undefined` then. One statement (an INSERT … SELECT whose
 * WHERE NOT EXISTS reads the table it writes), so two concurrent creations cannot both pass the check.
 */
export async function insertTenantIfEmailFree(db: Db, row: NewTenant): Promise<Tenant | undefined> {
  const now = new Date();
  const [inserted] = await db
    .insert(tenants)
    .select(
      sql`select ${row.id}, ${row.email}, ${row.name}, ${row.walletAddress}, ${row.tempoWalletAddress ?? null},
        ${(row.createdAt ?? now).getTime()}, ${(row.updatedAt ?? now).getTime()}
        where not exists (select 1 from ${tenants} where ${tenants.email} = ${row.email})`,
    )
    .returning();
  return inserted;
}

export async function findTenantById(db: Db, id: string): Promise<Tenant | undefined> {
  const [row] = await db.select().from(tenants).where(eq(tenants.id, id)).limit(1);
  return row;
}

export async function hasAnyTenant(db: Db): Promise<boolean> {
  const rows = await db.select({ id: tenants.id }).from(tenants).limit(1);
  return rows.length > 0;
}

/** Sets the tenant's name and e-mail (an e-mail may be another tenant's too: it is a contact, not an identity). */
export async function updateTenantProfile(
  db: Db,
  id: string,
  profile: { name: string; email: string },
  now: Date,
  audit?: BatchItem<"sqlite">,
): Promise<Tenant | undefined> {
  const update = db
    .update(tenants)
    .set({ ...profile, updatedAt: now })
    .where(eq(tenants.id, id))
    .returning();
  const [[row]] = audit ? await db.batch([update, audit]) : [await update];
  return row;
}

/** Sets the primary (`walletAddress`) or the tempo wallet. */
export async function updateTenantWallet(
  db: Db,
  id: string,
  which: "walletAddress" | "tempoWalletAddress",
  address: string,
  now: Date,
  audit?: BatchItem<"sqlite">,
): Promise<Tenant | undefined> {
  const update = db
    .update(tenants)
    .set({ [which]: address, updatedAt: now })
    .where(eq(tenants.id, id))
    .returning();
  const [[row]] = audit ? await db.batch([update, audit]) : [await update];
  return row;
}
