/** Data access for dashboard sign-in: sessions, SIWE nonces and one-time sign-in links. Only hashes of secrets are stored. */
import { and, desc, eq, gt, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./client.ts";
import {
  type DashboardSessionRow,
  dashboardFlashes,
  dashboardFormTokens,
  dashboardSessions,
  signInLinks,
  siweNonces,
  type Tenant,
  tenants,
} from "./schema.ts";

// ---- sessions

/** Inserts a session; `audit` (the sign-in's account event) is written in the same batch. */
export async function insertSession(
  db: Db,
  row: {
    id: string;
    tenantId: string | null;
    signupWallet: string | null;
    now: Date;
    expiresAt: Date;
    ip: string | null;
    userAgent: string | null;
    signedInWith: string | null;
  },
  audit?: BatchItem<"sqlite">,
): Promise<void> {
  const insert = db.insert(dashboardSessions).values({
    id: row.id,
    tenantId: row.tenantId,
    signupWallet: row.signupWallet,
    createdAt: row.now,
    lastSeenAt: row.now,
    expiresAt: row.expiresAt,
    revokedAt: null,
    ip: row.ip,
    userAgent: row.userAgent,
    signedInWith: row.signedInWith,
  });
  if (audit) await db.batch([insert, audit]);
  else await insert;
}

/** The live session with this id hash and its tenant: not revoked, not past `expiresAt`, seen after `idleSince`. */
export async function findLiveSession(
  db: Db,
  idHash: string,
  now: Date,
  idleSince: Date,
): Promise<{ session: DashboardSessionRow; tenant: Tenant | null } | undefined> {
  const [row] = await db
    .select({ session: dashboardSessions, tenant: tenants })
    .from(dashboardSessions)
    .leftJoin(tenants, eq(tenants.id, dashboardSessions.tenantId))
    .where(
      and(
        eq(dashboardSessions.id, idHash),
        isNull(dashboardSessions.revokedAt),
        gt(dashboardSessions.expiresAt, now),
        gt(dashboardSessions.lastSeenAt, idleSince),
      ),
    )
    .limit(1);
  return row;
}

/** Moves `lastSeenAt` to `now` if it is older than `staleBefore` (at most one write per session a minute). */
export async function touchSession(db: Db, idHash: string, now: Date, staleBefore: Date): Promise<void> {
  await db
    .update(dashboardSessions)
    .set({ lastSeenAt: now })
    .where(and(eq(dashboardSessions.id, idHash), lt(dashboardSessions.lastSeenAt, staleBefore)));
}

/** Ends one session; `audit` (the sign-out's account event) is written in the same batch. */
export async function revokeSession(db: Db, idHash: string, now: Date, audit?: BatchItem<"sqlite">): Promise<void> {
  const update = db
    .update(dashboardSessions)
    .set({ revokedAt: now })
    .where(and(eq(dashboardSessions.id, idHash), isNull(dashboardSessions.revokedAt)));
  if (audit) await db.batch([update, audit]);
  else await update;
}

/** Binds a sign-up session to the tenant it just created. */
export const bindSessionToTenantQuery = (db: Db, idHash: string, tenantId: string, expiresAt: Date) =>
  db
    .update(dashboardSessions)
    .set({ tenantId, signupWallet: null, expiresAt })
    .where(and(eq(dashboardSessions.id, idHash), isNull(dashboardSessions.tenantId)));

// ---- SIWE nonces

/** Stores a nonce, and drops expired ones (an index on `expires_at` keeps that cheap). */
export async function insertNonce(db: Db, nonce: string, purpose: string, now: Date, expiresAt: Date): Promise<void> {
  await db.batch([
    db.delete(siweNonces).where(lt(siweNonces.expiresAt, now)),
    db.insert(siweNonces).values({ nonce, purpose, createdAt: now, expiresAt }),
  ]);
}

/** Uses a nonce up: deletes it, and answers what it was issued for (`purpose`) unless it was unknown or expired. Race-free. */
export async function consumeNonce(db: Db, nonce: string, now: Date): Promise<string | undefined> {
  const rows = await db
    .delete(siweNonces)
    .where(and(eq(siweNonces.nonce, nonce)))
    .returning({ purpose: siweNonces.purpose, expiresAt: siweNonces.expiresAt });
  const row = rows[0];
  return row !== undefined && row.expiresAt.getTime() > now.getTime() ? row.purpose : undefined;
}

// ---- sign-in links

export async function insertSignInLink(db: Db, tokenHash: string, tenantId: string, now: Date, expiresAt: Date): Promise<void> {
  await db.insert(signInLinks).values({ tokenHash, tenantId, createdAt: now, expiresAt, usedAt: null });
}

/** Marks the link used if it is unused and unexpired; its tenant id, or `undefined`. One conditional UPDATE: single use. */
export async function consumeSignInLink(db: Db, tokenHash: string, now: Date): Promise<string | undefined> {
  const [row] = await db
    .update(signInLinks)
    .set({ usedAt: now })
    .where(and(eq(signInLinks.tokenHash, tokenHash), isNull(signInLinks.usedAt), gt(signInLinks.expiresAt, now)))
    .returning({ tenantId: signInLinks.tenantId });
  return row?.tenantId;
}

// ---- tenants by wallet

/** The oldest tenant whose primary or tempo wallet is `address` (case-insensitive). */
export async function findTenantByWallet(db: Db, address: string): Promise<Tenant | undefined> {
  const lower = address.toLowerCase();
  const [row] = await db
    .select()
    .from(tenants)
    .where(or(sql`lower(${tenants.walletAddress}) = ${lower}`, sql`lower(${tenants.tempoWalletAddress}) = ${lower}`))
    .orderBy(tenants.createdAt, tenants.id)
    .limit(1);
  return row;
}

// ---- cleanup

/**
 * Deletes what sign-in leaves behind once it can no longer be used: SIWE nonces and sign-in links past their expiry
 * (used or not), and sessions past theirs or idle since `idleSince` (revoked or not). Run by the hourly Cron Trigger
 * (src/index.ts); nonces are also dropped on every insert. Each table has an index on `expires_at`.
 */
export async function deleteExpiredSignInRows(
  db: Db,
  now: Date,
  idleSince: Date,
): Promise<{ nonces: number; links: number; sessions: number }> {
  const [nonces, links, sessions] = await db.batch([
    db.delete(siweNonces).where(lte(siweNonces.expiresAt, now)),
    db.delete(signInLinks).where(lte(signInLinks.expiresAt, now)),
    db.delete(dashboardSessions).where(or(lte(dashboardSessions.expiresAt, now), lte(dashboardSessions.lastSeenAt, idleSince))),
  ]);
  return { nonces: nonces.meta.changes ?? 0, links: links.meta.changes ?? 0, sessions: sessions.meta.changes ?? 0 };
}

// ---- one-time form tokens

type FormTokenKey = { sessionId: string; token: string };
const formTokenIs = (k: FormTokenKey) =>
  and(eq(dashboardFormTokens.sessionId, k.sessionId), eq(dashboardFormTokens.token, k.token));

/**
 * Claims a form token for its session: `true` for the first claim only (one INSERT; the primary key makes it
 * single-use under concurrency), `false` when it was claimed before. Drops expired tokens in the same batch.
 */
export async function claimFormToken(db: Db, k: FormTokenKey & { now: Date; ttlMs: number }): Promise<boolean> {
  const [, claimed] = await db.batch([
    db.delete(dashboardFormTokens).where(lt(dashboardFormTokens.expiresAt, k.now)),
    db
      .insert(dashboardFormTokens)
      .values({ sessionId: k.sessionId, token: k.token, location: null, expiresAt: new Date(k.now.getTime() + k.ttlMs) })
      .onConflictDoNothing()
      .returning({ token: dashboardFormTokens.token }),
  ]);
  return claimed.length === 1;
}

/** Where the first post of a claimed token went; `null` while it runs (or if it was given back meanwhile). */
export async function formTokenLocation(db: Db, k: FormTokenKey): Promise<string | null> {
  const [row] = await db.select({ location: dashboardFormTokens.location }).from(dashboardFormTokens).where(formTokenIs(k));
  return row?.location ?? null;
}

/** Records where a claimed token's post went, or gives the token back (`null`: the post created nothing). */
export async function settleFormToken(db: Db, k: FormTokenKey, location: string | null): Promise<void> {
  if (location === null) await db.delete(dashboardFormTokens).where(formTokenIs(k));
  else await db.update(dashboardFormTokens).set({ location }).where(formTokenIs(k));
}

// ---- flashes (messages shown once after a redirect)

/** Stores a flash and drops expired ones, in one batch. */
export async function insertFlash(
  db: Db,
  f: { id: string; sessionId: string; body: string; now: Date; ttlMs: number },
): Promise<void> {
  await db.batch([
    db.delete(dashboardFlashes).where(lt(dashboardFlashes.expiresAt, f.now)),
    db.insert(dashboardFlashes).values({
      id: f.id,
      sessionId: f.sessionId,
      body: f.body,
      expiresAt: new Date(f.now.getTime() + f.ttlMs),
    }),
  ]);
}

/** Deletes the session's unexpired flash `id` and returns its body: at most one reader ever gets it. */
export async function consumeFlash(db: Db, id: string, sessionId: string, now: Date): Promise<string | undefined> {
  const [row] = await db
    .delete(dashboardFlashes)
    .where(and(eq(dashboardFlashes.id, id), eq(dashboardFlashes.sessionId, sessionId), gt(dashboardFlashes.expiresAt, now)))
    .returning({ body: dashboardFlashes.body });
  return row?.body;
}

// ---- a tenant's sessions

/** The tenant's live sessions, most recently seen first. */
export async function listLiveSessions(db: Db, tenantId: string, now: Date, idleSince: Date): Promise<DashboardSessionRow[]> {
  return db
    .select()
    .from(dashboardSessions)
    .where(
      and(
        eq(dashboardSessions.tenantId, tenantId),
        isNull(dashboardSessions.revokedAt),
        gt(dashboardSessions.expiresAt, now),
        gt(dashboardSessions.lastSeenAt, idleSince),
      ),
    )
    .orderBy(desc(dashboardSessions.lastSeenAt))
    .limit(100);
}

/** Ends every live session of the tenant (sign out everywhere), and records it, in one batch. */
export async function revokeTenantSessions(db: Db, tenantId: string, now: Date, audit: BatchItem<"sqlite">): Promise<void> {
  await db.batch([
    db
      .update(dashboardSessions)
      .set({ revokedAt: now })
      .where(and(eq(dashboardSessions.tenantId, tenantId), isNull(dashboardSessions.revokedAt))),
    audit,
  ]);
}
