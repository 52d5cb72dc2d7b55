import { and, desc, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { apiKeys, type KeyEventAction, type KeyEventActor, type KeyEventRow, keyEvents } from "./schema.ts";

export interface KeyEventSource {
  action: KeyEventAction;
  actor: KeyEventActor;
  ip: string | null;
  at: Date;
}

/**
 * An `INSERT INTO key_events SELECT … FROM api_keys WHERE id = ? AND <condition>` statement: the event copies the
 * key's tenant, name and prefix from the row itself, and is written only if the row matches. Meant to run in the
 * same `db.batch` as the change it records (after it, or before a delete).
 */
export function keyEventFromKey(db: Db, keyId: string, source: KeyEventSource, condition?: SQL) {
  const values: Record<keyof typeof keyEvents.$inferInsert, SQL> = {
    id: sql`${`kev_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`}`,
    tenantId: sql`${apiKeys.tenantId}`,
    keyId: sql`${apiKeys.id}`,
    keyName: sql`${apiKeys.name}`,
    keyPrefix: sql`${apiKeys.keyPrefix}`,
    action: sql`${source.action}`,
    actor: sql`${source.actor}`,
    ip: source.ip === null ? sql`null` : sql`${source.ip}`,
    createdAt: sql`${source.at.getTime()}`,
  };
  const columns = Object.keys(getTableColumns(keyEvents)) as (keyof typeof values)[];
  const where = condition ? and(eq(apiKeys.id, keyId), condition) : eq(apiKeys.id, keyId);
  return db.insert(keyEvents).select(
    sql`select ${sql.join(
      columns.map((k) => values[k]),
      sql`, `,
    )} from ${apiKeys} where ${where}`,
  );
}

/** `changes() > 0`: the previous statement of the batch changed a row. */
export const previousStatementChanged = sql`changes() > 0`;

/** A tenant's key events, newest first. */
export async function listKeyEventsOfTenant(db: Db, tenantId: string, limit: number, offset: number): Promise<KeyEventRow[]> {
  return db
    .select()
    .from(keyEvents)
    .where(eq(keyEvents.tenantId, tenantId))
    .orderBy(desc(keyEvents.createdAt), desc(keyEvents.id))
    .limit(limit)
    .offset(offset);
}
