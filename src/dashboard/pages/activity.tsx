/**
 * Account security: the active sessions (browser, address, how it signed in, when last seen) with "Sign out
 * everywhere", and the activity list of every account event, newest first: sign-ins and sign-outs, profile and wallet
 * changes, service and paywall changes (through the dashboard or the API), and key changes (dashboard or operator CLI).
 *
 * In three parts: `activityPageOf` what the query asks, `loadActivity` what the data is, `ActivityView` what the page
 * shows.
 */
import { Hono } from "hono";
import { type ActivityRow, listActivityOfTenant } from "../../db/account-events.ts";
import type { Db } from "../../db/client.ts";
import { listLiveSessions } from "../../db/dashboard.ts";
import type { DashboardSessionRow } from "../../db/schema.ts";
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

// ---- what the query asks

/** The page asked for (`?page=`): a whole number from 1 to 10,000; anything else is the first. */
export const activityPageOf = (page: string | undefined): number =>
  Math.max(1, Math.min(10_000, Number.parseInt(page ?? "1", 10) || 1));

// ---- what the data is

interface Activity {
  page: number;
  events: ActivityRow[];
  hasOlder: boolean;
  sessions: DashboardSessionRow[];
}

/** One page of the account's events (one more read to know whether an older page exists) and its live sessions. */
async function loadActivity(db: Db, tenantId: string, now: Date, page: number): Promise<Activity> {
  const [rows, sessions] = await Promise.all([
    listActivityOfTenant(db, tenantId, PAGE_SIZE + 1, (page - 1) * PAGE_SIZE),
    listLiveSessions(db, tenantId, now, new Date(now.getTime() - SESSION_IDLE_MS)),
  ]);
  return { page, events: rows.slice(0, PAGE_SIZE), hasOlder: rows.length > PAGE_SIZE, sessions };
}

// ---- what the page shows

function SessionItem({ s, current }: { s: DashboardSessionRow; current: boolean }) {
  return (
    <li>
      <strong>{describeUserAgent(s.userAgent)}</strong>
      {current && (
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
  );
}

function Sessions({ sessions, currentId }: { sessions: DashboardSessionRow[]; currentId: string }) {
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Active sessions</h2>
      <p class="hint">
        Browsers signed in to this account now. A session ends 12 hours after its last use, or 7 days after sign-in.
      </p>
      <ul>
        {sessions.map((s) => (
          <SessionItem s={s} current={s.id === currentId} />
        ))}
      </ul>
      <form method="post" action="/dashboard/sessions/sign-out-everywhere">
        <button type="submit" class="danger">
          Sign out everywhere
        </button>{" "}
        <span class="hint">Ends every session above, this one included.</span>
      </form>
    </section>
  );
}

function EventRow({ e }: { e: ActivityRow }) {
  return (
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
  );
}

function Events({ events, page, hasOlder }: Pick<Activity, "events" | "page" | "hasOlder">) {
  return (
    <section aria-labelledby="activity-heading">
      <h2 id="activity-heading">Activity</h2>
      <p class="hint">
        Every change to your account: sign-ins, profile and wallets, services, paywalls and webhook endpoints (here or through the
        API), and API keys.
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
                <EventRow e={e} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Activity pages" class="actions">
        {page > 1 && <a href={`/dashboard/activity?page=${page - 1}`}>Newer</a>}
        {hasOlder && <a href={`/dashboard/activity?page=${page + 1}`}>Older</a>}
      </nav>
    </section>
  );
}

function ActivityView({ activity, tenantName, currentId }: { activity: Activity; tenantName: string; currentId: string }) {
  return (
    <Layout title="Activity and sessions" active="activity" tenantName={tenantName}>
      <Sessions sessions={activity.sessions} currentId={currentId} />
      <Events events={activity.events} page={activity.page} hasOlder={activity.hasOlder} />
    </Layout>
  );
}

export const activityPages = new Hono<DashboardEnv>();

activityPages.get("/activity", async (c) => {
  const { db, session, now } = c.var;
  const activity = await loadActivity(db, session.tenant.id, now, activityPageOf(c.req.query("page")));
  return c.html(<ActivityView activity={activity} tenantName={session.tenant.name} currentId={session.idHash} />);
});

activityPages.post("/sessions/sign-out-everywhere", async (c) => {
  await endAllSessions(c);
  return c.redirect("/dashboard/sign-in?signed-out=everywhere", 303);
});
