/**
 * Double-submit protection for the dashboard's create forms, as an `Idempotency-Key` is for the API: each rendering
 * of a create form carries a fresh one-time token (`<FormToken />`), and its post goes through `oneTimeForm`. The
 * first post of a token claims it (a D1 insert keyed by session and token, so single-use under concurrency) and, once
 * it has redirected (Post/Redirect/Get), records where; every later post of the same token creates nothing and is
 * redirected there (or, while the first still runs, to the form's list page). A post that created nothing (the form
 * came back with its errors) gives its token back. Tokens expire after a day. A post without a token (not sent from a
 * dashboard page) is handled as before.
 */
import type { MiddlewareHandler } from "hono";
import { claimFormToken, formTokenLocation, settleFormToken } from "../db/dashboard.ts";
import { randomHex } from "../lib/ids.ts";
import type { DashboardEnv } from "./env.ts";

export const FORM_TOKEN_FIELD = "formToken";
export const FORM_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
const TOKEN = /^[0-9a-f]{32}$/;

/** The hidden field of a create form: a fresh token each time the form is rendered. */
export const FormToken = () => <input type="hidden" name={FORM_TOKEN_FIELD} value={randomHex(16)} />;

/** A create form's post, once per token; `listPage` is where a repeat lands while the first post still runs. */
export function oneTimeForm(listPage: string): MiddlewareHandler<DashboardEnv> {
  return async function oneTimeForm(c, next) {
    const token = (await c.req.parseBody())[FORM_TOKEN_FIELD];
    if (typeof token !== "string" || !TOKEN.test(token)) return next();
    const key = { sessionId: c.var.session.idHash, token };
    if (!(await claimFormToken(c.var.db, { ...key, now: c.var.now, ttlMs: FORM_TOKEN_TTL_MS }))) {
      return c.redirect((await formTokenLocation(c.var.db, key)) ?? listPage, 303);
    }
    await next();
    const location = c.res.status === 303 ? c.res.headers.get("location") : null;
    await settleFormToken(c.var.db, key, location?.startsWith("/dashboard/") ? location : null);
  };
}
