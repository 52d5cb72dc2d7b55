import { desc, eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client.ts";
import { isUniqueViolation } from "./errors.ts";
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

/** Inserts the tenant unless its email is taken: `undefined` on a duplicate email (the unique index decides, race-free). */
export async function insertTenantIfEmailFree(db: Db, row: NewTenant): Promise<Tenant | undefined> {
  const [inserted] = await db.insert(tenants).values(row).onConflictDoNothing({ target: tenants.email }).returning();
  return inserted;
}

export async function findTenantById(db: Db, id: string): Promise<Tenant | undefined> {
  return db.query.tenants.findFirst({ where: eq(tenants.id, id) });
}

export async function hasAnyTenant(db: Db): Promise<boolean> {
  const rows = await db.select({ id: tenants.id }).from(tenants).limit(1);
  return rows.length > 0;
}

/** Sets the tenant's name and e-mail; `undefined` when the e-mail belongs to another tenant (the unique index decides). */
export async function updateTenantProfile(
  db: Db,
  id: string,
  profile: { name: string; email: string },
  now: Date,
  audit?: BatchItem<"sqlite">,
): Promise<Tenant | undefined> {
  try {
    const update = db
      .update(tenants)
      .set({ ...profile, updatedAt: now })
      .where(eq(tenants.id, id))
      .returning();
    const [[row]] = audit ? await db.batch([update, audit]) : [await update];
    return row;
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
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
