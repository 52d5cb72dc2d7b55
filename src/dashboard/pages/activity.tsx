/**
 * Account security: the active sessions (browser, address, how it signed in, when last seen) with "Sign out
 * everywhere", and the activity list of every account event, newest first: sign-ins and sign-outs, profile and wallet
 * changes, service and paywall changes (through the dashboard or the API), and key changes (dashboard or operator CLI).
 */
import { Hono } from "hono";
import { listActivityOfTenant } from "../../db/account-events.ts";
import { listLiveSessions } from "../../db/dashboard.ts";
import { describeUserAgent } from "../../lib/user-agent.ts";
import type { DashboardEnv } from "../env.ts";
import { formatDate } from "../format.ts";
import { Layout } from "../layout.tsx";
import { endAllSessions, SESSION_IDLE_MS } from "../session.ts";

const PAGE_SIZE = 50;

const BY: Record<string, string> = {
  dashboard: "Dashboard",
  "operator-cli": "Operator (CLI)",
  api: "API",
  "dev-runner": "npm run dev (this machine)",
};

/** What an event says, in words. */
const WHAT: Record<string, string> = {
  "signed-in": "Signed in",
  "signed-out": "Signed out",
  "signed-out-everywhere": "Signed out everywhere",
  "profile-changed": "Profile changed",
  "wallet-changed": "Wallet changed",
  "service-created": "Service created",
  "service-updated": "Service changed",
  "service-deleted": "Service deleted",
  "paywall-created": "Paywall created",
  "paywall-updated": "Paywall changed",
  "paywall-deleted": "Paywall deleted",
  "paywall-enabled": "Paywall enabled",
  "paywall-disabled": "Paywall disabled",
  "webhook-endpoint-created": "Webhook endpoint created",
  "webhook-endpoint-updated": "Webhook endpoint changed",
  "webhook-endpoint-enabled": "Webhook endpoint enabled",
  "webhook-endpoint-disabled": "Webhook endpoint disabled",
  "webhook-endpoint-deleted": "Webhook endpoint deleted",
  "webhook-secret-rolled": "Webhook signing secret rolled",
};

export const activityPages = new Hono<DashboardEnv>();

activityPages.get("/activity", async (c) => {
  const tenant = c.var.session.tenant;
  const now = c.var.now;
  const page = Math.max(1, Math.min(10_000, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
  const [rows, sessions] = await Promise.all([
    listActivityOfTenant(c.var.db, tenant.id, PAGE_SIZE + 1, (page - 1) * PAGE_SIZE),
    listLiveSessions(c.var.db, tenant.id, now, new Date(now.getTime() - SESSION_IDLE_MS)),
  ]);
  const events = rows.slice(0, PAGE_SIZE);
  return c.html(
    <Layout title="Activity and sessions" active="activity" tenantName={tenant.name}>
      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Active sessions</h2>
        <p class="hint">
          Browsers signed in to this account now. A session ends 12 hours after its last use, or 7 days after sign-in.
        </p>
        <ul>
          {sessions.map((s) => (
            <li>
              <strong>{describeUserAgent(s.userAgent)}</strong>
              {s.id === c.var.session.idHash && (
                <>
                  {" "}
                  <span class="status active">this browser</span>
                </>
              )}
              <br />
              <span class="hint">
                {`Signed in ${formatDate(s.createdAt)} with ${s.signedInWith === "link" || !s.signedInWith ? "a one-time link" : `wallet ${s.signedInWith}`}, from ${s.ip ?? "an unknown address"}; last seen ${formatDate(s.lastSeenAt)}.`}
              </span>
            </li>
          ))}
        </ul>
        <form method="post" action="/dashboard/sessions/sign-out-everywhere">
          <button type="submit" class="danger">
            Sign out everywhere
          </button>{" "}
          <span class="hint">Ends every session above, this one included.</span>
        </form>
      </section>
      <section aria-labelledby="activity-heading">
        <h2 id="activity-heading">Activity</h2>
        <p class="hint">
          Every change to your account: sign-ins, profile and wallets, services, paywalls and webhook endpoints (here or through
          the API), and API keys.
        </p>
        {events.length === 0 ? (
          <p>Nothing yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="cards">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">Details</th>
                  <th scope="col">By</th>
                  <th scope="col">From IP</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => (
                  <tr>
                    <td data-label="When">{formatDate(new Date(e.createdAt))}</td>
                    <td data-label="What">{e.kind === "key" ? `Key ${e.action}` : (WHAT[e.action] ?? e.action)}</td>
                    <td data-label="Details">
                      {e.kind === "key" ? (
                        <span>
                          {e.subject} <code>{e.detail}…</code>
                        </span>
                      ) : (
                        [e.subject, e.detail].filter(Boolean).join(" · ") || "—"
                      )}
                    </td>
                    <td data-label="By">{BY[e.actor] ?? e.actor}</td>
                    <td data-label="From IP">{e.ip ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <nav aria-label="Activity pages" class="actions">
          {page > 1 && <a href={`/dashboard/activity?page=${page - 1}`}>Newer</a>}
          {rows.length > PAGE_SIZE && <a href={`/dashboard/activity?page=${page + 1}`}>Older</a>}
        </nav>
      </section>
    </Layout>,
  );
});

activityPages.post("/sessions/sign-out-everywhere", async (c) => {
  await endAllSessions(c);
  return c.redirect("/dashboard/sign-in?signed-out=everywhere", 303);
});
