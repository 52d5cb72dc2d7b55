/** The account audit trail (`account_events`) and the Activity page's read of it merged with the key events. */
import { desc, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import { newId } from "../lib/ids.ts";
import type { Db } from "./client.ts";
import type { Audit } from "./page.ts";
import { type AccountEventActor, accountEvents, keyEvents } from "./schema.ts";

export interface AccountEventSource {
  tenantId: string;
  action: string;
  subject?: string | null;
  detail?: string | null;
  actor: AccountEventActor;
  ip?: string | null;
  at: Date;
}

const valuesOf = (e: AccountEventSource) => ({
  id: newId("aev"),
  tenantId: e.tenantId,
  action: e.action,
  subject: e.subject ?? null,
  detail: e.detail ?? null,
  actor: e.actor,
  ip: e.ip ?? null,
  createdAt: e.at,
});

/** An unconditional insert of the event, for a batch (or on its own). */
export const accountEventQuery = (db: Db, e: AccountEventSource) => db.insert(accountEvents).values(valuesOf(e));

/**
 * `INSERT INTO account_events SELECT <values> WHERE <condition>`: the event is written only if `condition` holds when
 * the statement runs, e.g. "the row just written exists" or `changes() > 0` right after the change in the same batch.
 */
export function accountEventIf(db: Db, e: AccountEventSource, condition: SQL) {
  const v = valuesOf(e);
  const values: Record<keyof typeof v, SQL> = {
    id: sql`${v.id}`,
    tenantId: sql`${v.tenantId}`,
    action: sql`${v.action}`,
    subject: v.subject === null ? sql`null` : sql`${v.subject}`,
    detail: v.detail === null ? sql`null` : sql`${v.detail}`,
    actor: sql`${v.actor}`,
    ip: v.ip === null ? sql`null` : sql`${v.ip}`,
    createdAt: sql`${v.createdAt.getTime()}`,
  };
  const columns = Object.keys(getTableColumns(accountEvents)) as (keyof typeof values)[];
  return db.insert(accountEvents).select(
    sql`select ${sql.join(
      columns.map((k) => values[k]),
      sql`, `,
    )} where ${condition}`,
  );
}

/** Who makes a change, for whom, and when: what every audited command knows before it writes. */
export type ChangeBy = Pick<AccountEventSource, "tenantId" | "actor" | "ip" | "at">;

/** The account event of a change, for the change's batch: written only if the batch's condition holds (see `Audit`). */
export const auditOf =
  (db: Db, by: ChangeBy, action: string, subject: string, detail: string | null = null): Audit =>
  (condition) =>
    accountEventIf(db, { ...by, action, subject, detail }, condition);

/** One line of the Activity page: an account event or a key event, in one shape. */
export interface ActivityRow {
  kind: "account" | "key";
  action: string;
  subject: string | null;
  detail: string | null;
  actor: string;
  ip: string | null;
  createdAt: number;
}

/** The tenant's account and key events together, newest first (one query, paged). */
export async function listActivityOfTenant(db: Db, tenantId: string, limit: number, offset: number): Promise<ActivityRow[]> {
  const rows = await db.all<ActivityRow>(sql`
    SELECT 'account' AS kind, ${accountEvents.action} AS action, ${accountEvents.subject} AS subject,
           ${accountEvents.detail} AS detail, ${accountEvents.actor} AS actor, ${accountEvents.ip} AS ip,
           ${accountEvents.createdAt} AS createdAt, ${accountEvents.id} AS id
      FROM ${accountEvents} WHERE ${eq(accountEvents.tenantId, tenantId)}
    UNION ALL
    SELECT 'key', ${keyEvents.action}, ${keyEvents.keyName}, ${keyEvents.keyPrefix}, ${keyEvents.actor}, ${keyEvents.ip},
           ${keyEvents.createdAt}, ${keyEvents.id}
      FROM ${keyEvents} WHERE ${eq(keyEvents.tenantId, tenantId)}
    ORDER BY createdAt DESC, id DESC
    LIMIT ${limit} OFFSET ${offset}`);
  return rows.map(({ kind, action, subject, detail, actor, ip, createdAt }) => ({
    kind,
    action,
    subject,
    detail,
    actor,
    ip,
    createdAt: Number(createdAt),
  }));
}

/** A tenant's account events, newest first (tests and the CLI). */
export async function listAccountEventsOfTenant(db: Db, tenantId: string, limit = 100) {
  return db
    .select()
    .from(accountEvents)
    .where(eq(accountEvents.tenantId, tenantId))
    .orderBy(desc(accountEvents.createdAt), desc(accountEvents.id))
    .limit(limit);
}
