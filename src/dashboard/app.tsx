/**
 * The tenant dashboard, served under `/dashboard` by the same Worker: server-rendered pages (Hono JSX), a session
 * cookie instead of an API key, and its own browser protections (see security.ts and session.ts). It is not part
 * of the `/v1` API: not in `/openapi.json`, not behind API-key authentication.
 *
 * Pages of other modules mount here with `dashboard.route("/", theirPages)` behind `requireSession()`, above the
 * catch-all 404 route.
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError } from "../core/http/errors.ts";
import { noStore } from "../core/http/no-store.ts";
import { getDb } from "../db/client.ts";
import { isDatabaseFailure } from "../db/errors.ts";
import { ASSETS } from "./assets.ts";
import type { DashboardEnv, DashboardOptions, SignupPolicy } from "./env.ts";
import { Layout, Notice } from "./layout.tsx";
import { activityPages } from "./pages/activity.tsx";
import { discoveryPages } from "./pages/discovery.tsx";
import { earningsPages } from "./pages/earnings.tsx";
import { keyPages } from "./pages/keys.tsx";
import { profilePages } from "./pages/profile.tsx";
import { servicesPages } from "./pages/services.tsx";
import { signInPages } from "./pages/sign-in.tsx";
import { webhookPages } from "./pages/webhook-endpoints.tsx";
import { contentSecurityPolicy, formBodies, sameOriginForms } from "./security.ts";
import { currentSession, requireSession } from "./session.ts";

export type { DashboardEnv } from "./env.ts";
export { Layout, Notice } from "./layout.tsx";
export { requireSession } from "./session.ts";

const signupPolicy = (value: unknown): SignupPolicy => (value === "open" ? "open" : "closed");

/** The message and status a dashboard page shows for an error: an `ApiError`'s own message, else a generic one. */
function describe(err: unknown): { status: number; message: string } {
  if (err instanceof ApiError) return { status: err.status, message: err.message };
  if (err instanceof HTTPException) {
    if (err.status === 403)
      return { status: 403, message: "This request did not come from a dashboard page (cross-site request refused)." };
    if (err.status === 415) return { status: 415, message: "The dashboard accepts form submissions only." };
    if (err.status === 413) return { status: 413, message: "The form is too large to be sent." };
    if (err.status === 400) return { status: 400, message: "The form could not be read; reload the page and try again." };
    return { status: err.status, message: "The request is not valid." };
  }
  if (isDatabaseFailure(err)) return { status: 500, message: "A database error occurred; try again." };
  return { status: 500, message: "Something went wrong; try again." };
}

export function createDashboard(options: DashboardOptions = {}) {
  const dashboard = new Hono<DashboardEnv>();

  dashboard.get("/assets/:file", (c) => {
    const asset = ASSETS[c.req.param("file")];
    if (!asset) return c.text("Not found", 404, { "Cache-Control": "no-store" });
    // The name carries a hash of the content: this URL always means these bytes.
    return c.body(asset.body, 200, { "Content-Type": asset.type, "Cache-Control": "public, max-age=31536000, immutable" });
  });

  dashboard.use("*", noStore(), contentSecurityPolicy(), async (c, next) => {
    c.set("db", getDb(c.env.DB));
    c.set("now", options.now ? options.now() : new Date());
    c.set("signup", options.signup ?? signupPolicy(c.env.DASHBOARD_SIGNUP));
    await next();
  });
  dashboard.use("*", sameOriginForms(), formBodies());

  dashboard.get("/", async (c) => c.redirect((await currentSession(c)) ? "/dashboard/keys" : "/dashboard/sign-in", 303));
  dashboard.route("/", signInPages);

  dashboard.use("*", requireSession());
  dashboard.route("/", keyPages);
  dashboard.route("/", activityPages);
  dashboard.route("/", servicesPages);
  dashboard.route("/", discoveryPages);
  dashboard.route("/", earningsPages);
  dashboard.route("/", webhookPages);
  dashboard.route("/", profilePages);

  // Last: any other dashboard path is the dashboard's own 404 page (a mounted app's notFound is not used by Hono,
  // so this is a route). Pages mounted later would be shadowed by it: mount them above.
  dashboard.all("*", (c) =>
    c.html(
      <Layout title="Not found">
        <Notice kind="error">There is no such dashboard page.</Notice>
        <p>
          <a href="/dashboard">Back to the dashboard</a>
        </p>
      </Layout>,
      404,
    ),
  );
  dashboard.onError((err, c) => {
    const { status, message } = describe(err);
    c.set("errorCode", err instanceof ApiError ? err.code : status >= 500 ? "INTERNAL_ERROR" : "VALIDATION_ERROR");
    if (status >= 500 && !(err instanceof ApiError))
      console.error(JSON.stringify({ requestId: c.var.requestId, dashboardError: err instanceof Error ? err.name : "unknown" }));
    // An error's own headers go along, e.g. a 429's Retry-After.
    if (err instanceof ApiError) for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
    return c.html(
      <Layout title="Something went wrong">
        <Notice kind="error">{message}</Notice>
        <p>
          <a href="/dashboard">Back to the dashboard</a>
        </p>
      </Layout>,
      status as 400,
    );
  });
  return dashboard;
}
