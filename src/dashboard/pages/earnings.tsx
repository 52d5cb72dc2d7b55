/**
 * Earnings and traffic: revenue per token over four windows and the last 30 days as two charts (revenue per day,
 * requests / successes / errors per day), read from the daily roll-ups (migrations/0005 and 0018: at most 90 rows per
 * network and 30 of traffic, whatever the size of the history), the tenant's session channels summed per token (session
 * revenue, open channels, charged but not yet settled), then the tenant's transactions and events with the API's filters (status, network, protocol, paywall, service, date
 * range) and paging, through the same history queries as `/v1/transactions` and `/v1/events`, and one payment found
 * by the receipt a buyer holds (its transaction id or transfer hash).
 *
 * In three parts: `earnings/query.ts` what the query asks, `earnings/data.ts` what the data is (and `earnings/csv.ts`
 * the export), `earnings/view.tsx` what the page shows.
 */
import type { Context } from "hono";
import { Hono } from "hono";
import { networkTable } from "../../core/money/network-table.ts";
import type { DashboardEnv } from "../env.ts";
import { transactionsCsvStream } from "./earnings/csv.ts";
import { foreignFilter, historyFilters, loadChoices, loadEarnings } from "./earnings/data.ts";
import { parseEarningsQuery } from "./earnings/query.ts";
import { EarningsFrame, EarningsView, InvalidFilters } from "./earnings/view.tsx";

type Ctx = Context<DashboardEnv>;

async function earningsPage(c: Ctx) {
  const { db, session, now, cspNonce } = c.var;
  const choices = await loadChoices(db, session.tenant.id);
  const parsed = parseEarningsQuery(c.req.query());
  if (!parsed.ok) {
    return c.html(
      <EarningsFrame tenantName={session.tenant.name} nonce={cspNonce}>
        <InvalidFilters problems={parsed.problems} typed={parsed.typed} choices={choices} />
      </EarningsFrame>,
      400,
    );
  }
  const data = await loadEarnings(db, session.tenant.id, now, parsed.query, choices);
  return c.html(
    <EarningsFrame tenantName={session.tenant.name} nonce={cspNonce}>
      <EarningsView q={parsed.query} data={data} choices={choices} explorers={networkTable(c.env)} />
    </EarningsFrame>,
    data.foreign ? 404 : 200,
  );
}

/** The filtered transactions as CSV; filters that do not parse or name nothing of the tenant's get the page instead. */
async function transactionsCsv(c: Ctx) {
  const parsed = parseEarningsQuery(c.req.query());
  if (!parsed.ok) return earningsPage(c);
  const { db, session, now } = c.var;
  if (await foreignFilter(db, session.tenant.id, parsed.query)) return earningsPage(c);
  const filter = (await historyFilters(db, session.tenant.id, parsed.query)).transactions;
  const day = now.toISOString().slice(0, 10);
  return c.body(transactionsCsvStream(db, session.tenant.id, filter), 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="transactions-${day}.csv"`,
  });
}

export const earningsPages = new Hono<DashboardEnv>();

earningsPages.get("/earnings", earningsPage);
earningsPages.get("/earnings/transactions.csv", transactionsCsv);
