import { and, eq, gt, lte, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Db } from "./client.ts";
import { type IdempotencyRecord, idempotencyKeys } from "./schema.ts";

/** A claim as it is stored: the request's fingerprint, its token, its lease and the record's lifetime. */
export type ClaimedRow = ClaimRef & RequestFingerprint & { now: Date; leaseUntil: Date; expiresAt: Date };

const claimRow = (claim: ClaimedRow) => ({
  tenantId: claim.tenantId,
  key: claim.key,
  method: claim.method,
  path: claim.path,
  bodyHash: claim.bodyHash,
  state: "in_progress" as const,
  claimToken: claim.token,
  leaseUntil: claim.leaseUntil,
  responseStatus: null,
  responseBody: null,
  responseHeaders: null,
  createdAt: claim.now,
  expiresAt: claim.expiresAt,
});

/** One tenant's key, and the token of the request that claimed it. */
export interface ClaimRef {
  tenantId: string;
  key: string;
  token: string;
}

/** What a request is: a key is replayed only for the same method, path and body. */
export interface RequestFingerprint {
  method: string;
  path: string;
  bodyHash: string;
}

export interface StoredResponse {
  status: number;
  /** The body exactly as sent (masked: responses never carry a secret). */
  body: string;
  /** The headers a replay sends again (`ETag`). */
  headers: Record<string, string>;
}

/**
 * The statement that stores a write's response under its claimed key, for the write's own batch: it turns the claim
 * into `done` only where `applied` holds, the condition under which the batch's write takes effect (evaluated in the
 * same transaction, so the record is stored exactly when the write is). That the claim is still this request's is
 * the batch's `claimGuard`.
 */
type AnswerStore = (applied: SQL) => BatchItem<"sqlite">;

/**
 * A statement that fails the batch it is in when another request holds `claim`'s key: while the claim is ours it
 * leaves the row as it is; when a retry took the key over it would set the row's `state` to NULL, which the column
 * refuses. When a retry took the key and gave it back (its handler refused), the claim is taken again, so the write
 * and its stored answer still land together.
 */
function claimGuard(db: Db, claim: ClaimedRow): BatchItem<"sqlite"> {
  return db
    .insert(idempotencyKeys)
    .values(claimRow(claim))
    .onConflictDoUpdate({
      target: [idempotencyKeys.tenantId, idempotencyKeys.key],
      set: {
        state: sql`CASE WHEN ${idempotencyKeys.claimToken} = ${claim.token} AND ${idempotencyKeys.state} = 'in_progress' THEN ${idempotencyKeys.state} END`,
      },
    });
}

const ofKey = (tenantId: string, key: string) => and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.key, key));

/**
 * Claims the tenant's key for this request (`in_progress` until `leaseUntil`): a new key, an expired record, or an
 * abandoned claim of the same request whose lease has run out. Returns whether this request holds the key now.
 */
export async function claimIdempotencyKey(db: Db, claim: ClaimedRow): Promise<boolean> {
  const { tenantId: _tenant, key: _key, ...fresh } = claimRow(claim);
  const rows = await db
    .insert(idempotencyKeys)
    .values(claimRow(claim))
    .onConflictDoUpdate({
      target: [idempotencyKeys.tenantId, idempotencyKeys.key],
      set: fresh,
      setWhere: or(
        lte(idempotencyKeys.expiresAt, claim.now),
        and(
          eq(idempotencyKeys.state, "in_progress"),
          lte(idempotencyKeys.leaseUntil, claim.now),
          eq(idempotencyKeys.method, claim.method),
          eq(idempotencyKeys.path, claim.path),
          eq(idempotencyKeys.bodyHash, claim.bodyHash),
        ),
      ),
    })
    .returning({ token: idempotencyKeys.claimToken });
  return rows[0]?.token === claim.token;
}

/** The tenant's record of `key`, unless it has expired (an expired record is as good as none). */
export async function findIdempotencyRecord(
  db: Db,
  tenantId: string,
  key: string,
  now: Date,
): Promise<IdempotencyRecord | undefined> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(ofKey(tenantId, key), gt(idempotencyKeys.expiresAt, now)))
    .limit(1);
  return row;
}

/** Gives a claim up (the request was refused or failed before its write): a corrected retry may use the key at once. */
export async function releaseIdempotencyKey(db: Db, claim: ClaimRef): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(
      and(
        ofKey(claim.tenantId, claim.key),
        eq(idempotencyKeys.claimToken, claim.token),
        eq(idempotencyKeys.state, "in_progress"),
      ),
    );
}

/** The recorder of `response` for the request holding `claim` (see `ResponseRecorder`). */
export function responseRecorder(db: Db, claim: ClaimedRow, response: StoredResponse): ResponseRecorder {
  const guard = claimGuard(db, claim);
  const store: AnswerStore = (applied) =>
    db
      .update(idempotencyKeys)
      .set({
        state: "done",
        responseStatus: response.status,
        responseBody: response.body,
        responseHeaders: response.headers,
      })
      .where(and(ofKey(claim.tenantId, claim.key), applied));
  return { guard, store };
}

/** The two statements a recorded write adds to its batch: the claim's guard and the answer's store. */
export interface ResponseRecorder {
  guard: BatchItem<"sqlite">;
  store: AnswerStore;
}

/** Deletes records that expired at or before `now`, `chunk` rows per statement; returns how many went. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: Date, chunk = 1000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await db.run(
      sql`DELETE FROM ${idempotencyKeys} WHERE rowid IN (SELECT rowid FROM ${idempotencyKeys} WHERE ${idempotencyKeys.expiresAt} <= ${now.getTime()} LIMIT ${chunk})`,
    );
    const changes = result.meta.changes ?? 0;
    deleted += changes;
    if (changes < chunk) return deleted;
  }
}

type Statements = readonly [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];

/**
 * `statements` as one batch, with an idempotency `recorder` when the request carries a key: `first`, judging the
 * state the write will see (updates and deletes: `applied` is the write's own condition), or `last`, judging the
 * state it left (creates: `applied` is "the new row exists"). Returns the statements' own results. Without a
 * recorder a lone statement runs on its own.
 */
export async function batchRecording<T extends Statements>(
  db: Db,
  statements: T,
  recording?: { recorder: ResponseRecorder | undefined; applied: SQL; at: "first" | "last" },
): Promise<BatchResponse<T>> {
  const recorder = recording?.recorder;
  if (!recording || !recorder) {
    // A lone statement runs as itself, as it did before keys existed.
    if (statements.length === 1) return [await statements[0]] as BatchResponse<T>;
    return db.batch(statements);
  }
  const statement = recorder.store(recording.applied);
  if (recording.at === "last") {
    return (await db.batch([recorder.guard, ...statements, statement])).slice(1, -1) as BatchResponse<T>;
  }
  return (await db.batch([recorder.guard, statement, ...statements])).slice(2) as BatchResponse<T>;
}

/**
 * The row as an update setting `patch` leaves it (fields set to `undefined` are skipped, as drizzle skips them), with
 * its version bumped: a handler whose answer is stored with its write builds that answer from it, before the write,
 * and makes the write apply only to the version it read.
 */
export function rowAfterUpdate<R extends { version: number }>(row: R, patch: object): R {
  const set = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  return { ...row, ...set, version: row.version + 1 };
}
