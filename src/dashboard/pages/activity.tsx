/** Key activity: the audit trail of the tenant's key changes (what, when, by whom, from which address), newest first. */
import { Hono } from "hono";
import { listKeyEventsOfTenant } from "../../db/key-events.ts";
import type { DashboardEnv } from "../env.ts";
import { formatDate } from "../format.ts";
import { Layout } from "../layout.tsx";

const PAGE_SIZE = 50;

const BY = { dashboard: "Dashboard", "operator-cli": "Operator (CLI)" } as const;

export const activityPages = new Hono<DashboardEnv>();

activityPages.get("/activity", async (c) => {
  const page = Math.max(1, Math.min(10_000, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
  const rows = await listKeyEventsOfTenant(c.var.db, c.var.session.tenant.id, PAGE_SIZE + 1, (page - 1) * PAGE_SIZE);
  const events = rows.slice(0, PAGE_SIZE);
  return c.html(
    <Layout title="Key activity" active="activity" tenantName={c.var.session.tenant.name}>
      <section>
        <p>Every change to your API keys: created, paused, resumed, edited, revoked, deleted.</p>
        {events.length === 0 ? (
          <p>No key changes yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="cards">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Key</th>
                  <th scope="col">Action</th>
                  <th scope="col">By</th>
                  <th scope="col">From IP</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => (
                  <tr>
                    <td data-label="When">{formatDate(e.createdAt)}</td>
                    <td data-label="Key">
                      {e.keyName} <code>{e.keyPrefix}…</code>
                    </td>
                    <td data-label="Action">{e.action}</td>
                    <td data-label="By">{BY[e.actor]}</td>
                    <td data-label="From IP">{e.ip ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <nav aria-label="Pages" class="actions">
          {page > 1 && <a href={`/dashboard/activity?page=${page - 1}`}>Newer</a>}
          {rows.length > PAGE_SIZE && <a href={`/dashboard/activity?page=${page + 1}`}>Older</a>}
        </nav>
      </section>
    </Layout>,
  );
});
