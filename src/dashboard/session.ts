/**
 * Dashboard sessions: a server-side row per session (revocable), found by the SHA-256 of a random id that only
 * the cookie holds. The cookie is `HttpOnly`, `Secure`, `SameSite=Lax`, `__Host-` prefixed (so no subdomain can
 * set it). A session idles out 12 hours after it was last seen and ends 7 days after sign-in, or at sign-out. A
 * wallet's sign-up session (no tenant yet) ends 30 minutes after it began unless the sign-up completes, so what
 * strangers can make the table hold stays small; the hourly cron deletes ended and idle sessions.
 */
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { accountEventQuery } from "../db/account-events.ts";
import { findLiveSession, insertSession, revokeSession, revokeTenantSessions, touchSession } from "../db/dashboard.ts";
import { randomHex, sha256Hex } from "../lib/ids.ts";
import { describeUserAgent } from "../lib/user-agent.ts";
import type { DashboardEnv } from "./env.ts";

export const SESSION_COOKIE = "__Host-dashboard_session";
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_MAX_MS = 7 * 24 * 60 * 60 * 1000;
export const SIGNUP_SESSION_MS = 30 * 60 * 1000;
/** `lastSeenAt` is written at most once a minute per session. */
const TOUCH_INTERVAL_MS = 60 * 1000;

const SESSION_ID = /^[0-9a-f]{64}$/;

/** The client's address (Cloudflare's `CF-Connecting-IP`), for the activity list and the sessions list. */
export const clientIp = (c: Context<DashboardEnv>) => c.req.header("cf-connecting-ip") ?? null;
const userAgentOf = (c: Context<DashboardEnv>) => c.req.header("user-agent")?.slice(0, 300) ?? null;

/** An account event of the signed-in (or signing-in) tenant, by the dashboard, from this request's address. */
export const accountEvent = (
  c: Context<DashboardEnv>,
  tenantId: string,
  e: { action: string; subject?: string | null; detail?: string | null },
) => accountEventQuery(c.var.db, { tenantId, ...e, actor: "dashboard", ip: clientIp(c), at: c.var.now });

/**
 * Starts a session (for a tenant, or for a wallet that is signing up) and sets its cookie. `via` is how: `link`, or the
 * wallet address that signed in. A tenant's sign-in is recorded (with its browser) in the same batch.
 */
export async function startSession(
  c: Context<DashboardEnv>,
  owner: { tenantId: string } | { signupWallet: string },
  via: string,
): Promise<void> {
  const now = c.var.now;
  const id = randomHex(32);
  const userAgent = userAgentOf(c);
  await insertSession(
    c.var.db,
    {
      id: await sha256Hex(id),
      tenantId: "tenantId" in owner ? owner.tenantId : null,
      signupWallet: "signupWallet" in owner ? owner.signupWallet : null,
      now,
      expiresAt: new Date(now.getTime() + ("signupWallet" in owner ? SIGNUP_SESSION_MS : SESSION_MAX_MS)),
      ip: clientIp(c),
      userAgent,
      signedInWith: via,
    },
    "tenantId" in owner
      ? accountEvent(c, owner.tenantId, {
          action: "signed-in",
          subject: via === "link" ? "one-time link" : via,
          detail: describeUserAgent(userAgent),
        })
      : undefined,
  );
  setCookie(c, SESSION_COOKIE, id, {
    path: "/",
    httpOnly: true,
    secure: true,
    sameSite: "Lax",
    maxAge: SESSION_MAX_MS / 1000,
  });
}

/** The live session of this request, or `undefined`; refreshes its idle timer. */
export async function currentSession(c: Context<DashboardEnv>) {
  const id = getCookie(c, SESSION_COOKIE);
  if (!id || !SESSION_ID.test(id)) return undefined;
  const idHash = await sha256Hex(id);
  const now = c.var.now;
  const found = await findLiveSession(c.var.db, idHash, now, new Date(now.getTime() - SESSION_IDLE_MS));
  if (!found) return undefined;
  if (now.getTime() - found.session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) {
    await touchSession(c.var.db, idHash, now, new Date(now.getTime() - TOUCH_INTERVAL_MS));
  }
  return { idHash, ...found };
}

/** Ends the request's session (server-side, recorded for its tenant) and clears the cookie. */
export async function endSession(c: Context<DashboardEnv>): Promise<void> {
  const found = await currentSession(c);
  if (found) {
    const audit = found.tenant ? accountEvent(c, found.tenant.id, { action: "signed-out" }) : undefined;
    await revokeSession(c.var.db, found.idHash, c.var.now, audit);
  }
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: true });
}

/** Ends every session of the signed-in tenant, this one included (recorded), and clears the cookie. */
export async function endAllSessions(c: Context<DashboardEnv>): Promise<void> {
  const tenantId = c.var.session.tenant.id;
  await revokeTenantSessions(c.var.db, tenantId, c.var.now, accountEvent(c, tenantId, { action: "signed-out-everywhere" }));
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: true });
}

/**
 * Pages behind sign-in: without a live session, a redirect to the sign-in page; a session of a wallet still
 * signing up goes to the sign-up form. Sets `c.var.session` (`{ idHash, tenant }`).
 */
export function requireSession(): MiddlewareHandler<DashboardEnv> {
  return async function requireSession(c, next) {
    const found = await currentSession(c);
    if (!found) return c.redirect("/dashboard/sign-in", 303);
    if (!found.tenant) return c.redirect("/dashboard/sign-up", 303);
    c.set("session", { idHash: found.idHash, tenant: found.tenant });
    await next();
  };
}
