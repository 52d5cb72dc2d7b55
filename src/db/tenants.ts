import { desc, eq } from "drizzle-orm";
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
