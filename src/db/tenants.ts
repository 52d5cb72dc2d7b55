import { desc } from "drizzle-orm";
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
