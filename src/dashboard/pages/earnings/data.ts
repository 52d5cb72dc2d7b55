/**
 * What the earnings page shows, read: revenue per token over four windows and the last 30 days (from the daily
 * roll-ups), its session channels summed per token, the tenant's transactions and events through the same history queries as `/v1/transactions` and
 * `/v1/events`, and the paywalls and services the filters offer. Returns a plain view-model.
 */
import { outcomeEventIdOf, requestEventIdOf } from "../../../core/ledger/ids.ts";
import { chartToken, daysInToken, networksMatching, sumsPerToken, sumsSince } from "../../../core/money/tokens.ts";
import { sumChannels } from "../../../db/channels.ts";
import type { Db } from "../../../db/client.ts";
import { findCacheTotals, findDailyRevenue, findDailyTraffic, statsScope } from "../../../db/daily-stats.ts";
import { type EventFilter, findEventsPage } from "../../../db/events.ts";
import { findPaywall, listPaywallNames } from "../../../db/paywalls.ts";
import { findService, listServiceNames } from "../../../db/services.ts";
import { findTransactionIdByHash, findTransactionsPage, type TransactionFilter } from "../../../db/transactions.ts";
import { lastUtcDays } from "../../../lib/utc-days.ts";
import { EVENT_OF_STATUS } from "../../statuses.ts";
import type { EarningsQuery } from "./query.ts";

export const CHART_DAYS = 30;
export const PAGE_SIZE = 25;
/** Paywalls offered in the filter's list; a tenant with more types the paywall id. */
export const PAYWALL_CHOICES = 200;
const SERVICE_CHOICES = 200;

/** The windows of the totals: today (UTC), and the last 7, 30 and 90 UTC days, today included. */
export const WINDOWS = [
  { label: "Today", days: 1 },
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
];
const LONGEST_WINDOW = Math.max(...WINDOWS.map((w) => w.days));

/** The paywalls and services the filters offer. */
export interface Choices {
  paywalls: { id: string; name: string; slug: string }[];
  services: { id: string; name: string }[];
}

export async function loadChoices(db: Db, tenantId: string): Promise<Choices> {
  const [paywalls, services] = await Promise.all([
    listPaywallNames(db, tenantId, PAYWALL_CHOICES),
    listServiceNames(db, tenantId, SERVICE_CHOICES),
  ]);
  return { paywalls, services };
}

/**
 * The page's filters as the lists' filters. `payment` (a transaction id, or the hash of its transfer: the
 * `Payment-Transaction-Id` or `Payment-Reference` a buyer holds) narrows the transactions to that one and the events to
 * its request and outcome; a hash of none of the tenant's payments finds nothing.
 */
export async function historyFilters(
  db: Db,
  tenantId: string,
  q: EarningsQuery,
): Promise<{ transactions: TransactionFilter; events: EventFilter }> {
  const history = {
    paywallId: q.paywall,
    serviceId: q.service,
    from: q.from ? new Date(`${q.from}T00:00:00.000Z`) : undefined,
    to: q.to ? new Date(`${q.to}T23:59:59.999Z`) : undefined,
  };
  const common = { ...history, network: q.network, protocol: q.protocol };
  const transactions: TransactionFilter = { ...common, status: q.status };
  const events: EventFilter = { ...common, eventType: q.status ? EVENT_OF_STATUS[q.status] : undefined };
  if (q.payment) {
    const id = q.payment.startsWith("0x") ? await findTransactionIdByHash(db, tenantId, q.payment) : q.payment;
    transactions.id = id ?? "";
    events.ids = id ? [requestEventIdOf(id), outcomeEventIdOf(id)] : [];
  }
  return { transactions, events };
}

/** Why a paywall or service filter names nothing of the tenant's (then nothing is shown for it), or `undefined`. */
export async function foreignFilter(db: Db, tenantId: string, q: EarningsQuery): Promise<string | undefined> {
  const [paywall, service] = await Promise.all([
    q.paywall ? findPaywall(db, q.paywall) : undefined,
    q.service ? findService(db, q.service) : undefined,
  ]);
  if (q.paywall && paywall?.tenantId !== tenantId) return "None of your paywalls has this id: nothing is shown for it.";
  if (q.service && service?.tenantId !== tenantId) return "None of your services has this id: nothing is shown for it.";
  return undefined;
}

/** What the filters narrow the totals and charts to, in words. */
function scopeNameOf(q: EarningsQuery, choices: Choices): string {
  if (q.paywall) return `paywall ${choices.paywalls.find((p) => p.id === q.paywall)?.name ?? q.paywall}`;
  if (q.service) return `service ${choices.services.find((s) => s.id === q.service)?.name ?? q.service}`;
  return "all your paywalls";
}

export type Earnings = Awaited<ReturnType<typeof loadEarnings>>;

/** Everything the page shows for a valid query. */
export async function loadEarnings(db: Db, tenantId: string, now: Date, q: EarningsQuery, choices: Choices) {
  const [foreign, filters] = await Promise.all([foreignFilter(db, tenantId, q), historyFilters(db, tenantId, q)]);
  const days = lastUtcDays(now, CHART_DAYS);
  const since = WINDOWS.map((w) => lastUtcDays(now, w.days)[0] as string);
  const scope = statsScope(filters.transactions);
  const networks = networksMatching({ network: q.network, protocol: q.protocol });
  // One read of the longest window's revenue per day and network: the totals and the chart are both drawn from it.
  const [revenue, traffic, transactions, events, cached, sessions] = await Promise.all([
    findDailyRevenue(db, tenantId, lastUtcDays(now, LONGEST_WINDOW), scope, networks),
    findDailyTraffic(db, tenantId, days, scope),
    findTransactionsPage(db, tenantId, { limit: PAGE_SIZE, offset: (q.tpage - 1) * PAGE_SIZE }, filters.transactions),
    findEventsPage(db, tenantId, { limit: PAGE_SIZE, offset: (q.epage - 1) * PAGE_SIZE }, filters.events),
    findCacheTotals(db, tenantId, days, scope),
    sumChannels(db, tenantId),
  ]);
  const totals = sumsPerToken(sumsSince(revenue, since));
  // The chart draws one token: the one that earned most over its 30 days (USDC when none did).
  const chartIn = chartToken(
    totals,
    WINDOWS.findIndex((w) => w.days === CHART_DAYS),
  );
  const stats = daysInToken(traffic, revenue, chartIn);
  return { foreign, totals, chartIn, stats, cached, sessions, transactions, events, scopeName: scopeNameOf(q, choices) };
}
