/**
 * Earnings and traffic: revenue per token over four windows and the last 30 days as two charts (revenue per day,
 * requests / successes / errors per day), read from the daily roll-ups (migrations/0005 and 0018: at most 90 rows per
 * network and 30 of traffic, whatever the size of the history), then the
 * tenant's transactions and events with the API's filters (status, network, protocol, paywall, service, date
 * range) and paging, through the same history queries as `/v1/transactions` and `/v1/events`, and one payment found
 * by the receipt a buyer holds (its transaction id or transfer hash).
 */
import type { Context } from "hono";
import { Hono } from "hono";
import type { Child } from "hono/jsx";
import { z } from "zod";
import { outcomeEventIdOf, requestEventIdOf } from "../../core/ledger/ids.ts";
import { NETWORK_TABLE, networkTable } from "../../core/money/network-table.ts";
import { NETWORK_IDS, type NetworkId } from "../../core/money/networks.ts";
import { chartToken, daysInToken, networksMatching, sumsPerToken, sumsSince } from "../../core/money/tokens.ts";
import { formatUsdc, formatUsdcAmount } from "../../core/money/usdc.ts";
import { type CacheTotals, findCacheTotals, findDailyRevenue, findDailyTraffic, statsScope } from "../../db/daily-stats.ts";
import { type EventFilter, findEventsPage } from "../../db/events.ts";
import { findPaywall, listPaywallNames } from "../../db/paywalls.ts";
import { PROTOCOLS, TRANSACTION_STATUSES } from "../../db/schema.ts";
import { findService, listServiceNames } from "../../db/services.ts";
import {
  findTransactionIdByHash,
  findTransactionsAfter,
  findTransactionsPage,
  type TransactionFilter,
  type TransactionWithPaywall,
} from "../../db/transactions.ts";
import { formatCount as count } from "../../lib/digits.ts";
import { lastUtcDays } from "../../lib/utc-days.ts";
import { RevenueChart, TrafficChart } from "../charts.tsx";
import type { DashboardEnv } from "../env.ts";
import { formatDate } from "../format.ts";
import { Copyable, Layout, Notice, ScrollRegion } from "../layout.tsx";

type Ctx = Context<DashboardEnv>;

export const CHART_DAYS = 30;
const PAGE_SIZE = 25;
/** Paywalls offered in the filter's list; a tenant with more types the paywall id. */
const PAYWALL_CHOICES = 200;
const SERVICE_CHOICES = 200;

/** A form field left empty means "any". */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema.optional());
const Day = z.iso.date("a date as YYYY-MM-DD");
const PageNumber = z.preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(1).max(10_000).default(1));

/** The page's query: the API's history filters in form shapes (dates as UTC days, both ends included). */
export const EarningsQuerySchema = z
  .object({
    status: optional(z.enum(TRANSACTION_STATUSES)),
    network: optional(z.enum(NETWORK_IDS)),
    protocol: optional(z.enum(PROTOCOLS)),
    paywall: optional(z.string().max(64)),
    service: optional(z.string().max(64)),
    from: optional(Day),
    to: optional(Day),
    payment: optional(
      z
        .string()
        .trim()
        .regex(
          /^(txn_[a-z0-9_]{1,60}|0x[0-9a-fA-F]{64})$/,
          "a transaction id (txn_…) or a transaction hash (0x… , 64 hex digits)",
        ),
    ),
    tpage: PageNumber,
    epage: PageNumber,
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: "must not be after to", path: ["from"] });

export type EarningsQuery = z.output<typeof EarningsQuerySchema>;

/** The filters as typed, for the form to show them again when they are refused (text only; never trusted). */
const typedFilters = (query: Record<string, string>): Partial<EarningsQuery> =>
  Object.fromEntries(
    Object.entries(query).filter(([k, v]) => k in EarningsQuerySchema.shape && k !== "tpage" && k !== "epage" && v.length <= 100),
  ) as Partial<EarningsQuery>;

/** A link to the page with the same filters and one value changed. */
function hrefWith(q: EarningsQuery, change: Partial<Record<keyof EarningsQuery, string | number | undefined>>) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...q, ...change })) {
    if (v !== undefined && v !== "" && !((k === "tpage" || k === "epage") && v === 1)) params.set(k, String(v));
  }
  const s = params.toString();
  return `/dashboard/earnings${s ? `?${s}` : ""}`;
}

const STYLE = `
.charts { display:grid; gap:1rem; grid-template-columns:repeat(auto-fit, minmax(min(100%, 30rem), 1fr)); }
.chart { margin:0; min-width:0; }
.chart figcaption { font-weight:600; margin:0 0 .25rem; }
.chart svg { display:block; width:100%; height:auto; }
.chart .hint { margin:.25rem 0; }
.chart .legend { display:flex; flex-wrap:wrap; gap:.2rem 1rem; list-style:none; margin:.2rem 0; padding:0; color:#5b6576; font-size:.9rem; }
.chart .legend li { display:flex; align-items:center; gap:.35rem; }
.chart .legend svg { display:inline-block; width:24px; height:8px; flex:none; }
.filters { display:grid; gap:.25rem .75rem; grid-template-columns:repeat(auto-fill, minmax(min(100%, 12rem), 1fr)); align-items:end; }
.filters label { margin:.2rem 0; }
.filters select, .filters input { display:block; width:100%; font:inherit; padding:.35rem .4rem; border:1px solid #9aa3b2; border-radius:6px; background:#fff; }
.filters .actions { grid-column:1 / -1; align-items:center; }
td.amount, th.amount { text-align:right; font-variant-numeric:tabular-nums; }
td.amount { white-space:nowrap; overflow-wrap:normal; }
td.hash { white-space:nowrap; }
td.hash .copyable { flex-wrap:nowrap; }
td.hash code { display:inline-block; max-width:9rem; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; vertical-align:bottom; }
.section-head { display:flex; flex-wrap:wrap; align-items:baseline; gap:.5rem 1rem; }
.section-head h2 { margin-right:auto; }
`;

/** The windows of the totals: today (UTC), and the last 7, 30 and 90 UTC days, today included. */
const WINDOWS = [
  { label: "Today", days: 1 },
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
];
const LONGEST_WINDOW = Math.max(...WINDOWS.map((w) => w.days));

/** Event types follow the status filter: a payment started (PENDING) is a REQUEST, COMPLETED a SUCCESS, FAILED an ERROR. */
const EVENT_OF_STATUS = { PENDING: "REQUEST", COMPLETED: "SUCCESS", FAILED: "ERROR" } as const;

/** A link to a transaction or an address on its network's explorer, when the network table knows one. */
function ExplorerLink({ base, kind, value }: { base: string | null | undefined; kind: "tx" | "address"; value: string }) {
  if (!base) return null;
  return (
    <a href={`${base}/${kind}/${value}`} rel="noreferrer" target="_blank">
      Explorer
      <span class="sr-only">{` (${kind === "tx" ? "transaction" : "payer"} ${value.slice(0, 10)}…, opens ${new URL(base).host})`}</span>
    </a>
  );
}

function Select({
  name,
  label,
  value,
  options,
}: {
  name: string;
  label: string;
  value: string | undefined;
  options: { value: string; label: string }[];
}) {
  return (
    <div>
      <label for={`f-${name}`}>{label}</label>
      <select id={`f-${name}`} name={name}>
        <option value="">Any</option>
        {options.map((o) => (
          <option value={o.value} selected={o.value === value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

const plain = (values: readonly string[]) => values.map((v) => ({ value: v, label: v }));

interface Choices {
  paywalls: { id: string; name: string; slug: string }[];
  services: { id: string; name: string }[];
}

function Filters({ q, choices }: { q: Partial<EarningsQuery>; choices: Choices }) {
  const paywallListed = !q.paywall || choices.paywalls.some((p) => p.id === q.paywall);
  return (
    <form method="get" action="/dashboard/earnings" class="filters" aria-label="Filters">
      <Select name="status" label="Status" value={q.status} options={plain(TRANSACTION_STATUSES)} />
      <Select name="network" label="Network" value={q.network} options={plain(NETWORK_IDS)} />
      <Select name="protocol" label="Protocol" value={q.protocol} options={plain(PROTOCOLS)} />
      {choices.paywalls.length < PAYWALL_CHOICES && paywallListed ? (
        <Select
          name="paywall"
          label="Paywall"
          value={q.paywall}
          options={choices.paywalls.map((p) => ({ value: p.id, label: `${p.name} (${p.slug})` }))}
        />
      ) : (
        <div>
          <label for="f-paywall">Paywall id</label>
          <input id="f-paywall" type="text" name="paywall" value={q.paywall ?? ""} placeholder="pw_…" />
        </div>
      )}
      <Select
        name="service"
        label="Service"
        value={q.service}
        options={choices.services.map((s) => ({ value: s.id, label: s.name }))}
      />
      <div>
        <label for="f-payment">Transaction id or hash</label>
        <input id="f-payment" type="text" name="payment" value={q.payment ?? ""} placeholder="txn_… or 0x…" spellcheck={false} />
      </div>
      <div>
        <label for="f-from">From (UTC day)</label>
        <input id="f-from" type="date" name="from" value={q.from ?? ""} />
      </div>
      <div>
        <label for="f-to">To (UTC day, included)</label>
        <input id="f-to" type="date" name="to" value={q.to ?? ""} />
      </div>
      <div class="actions">
        <button type="submit">Apply filters</button>
        <a href="/dashboard/earnings">Clear filters</a>
      </div>
    </form>
  );
}

function Pager({ label, page, total, href }: { label: string; page: number; total: number; href: (page: number) => string }) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (pages <= 1) return null;
  return (
    <nav aria-label={label} class="actions">
      {page > 1 && <a href={href(page - 1)}>Newer</a>}
      <span class="hint">
        Page {page} of {pages}
      </span>
      {page < pages && <a href={href(page + 1)}>Older</a>}
    </nav>
  );
}

/** The edge cache's part of the window's paid answers (paywalls with cacheRules only), when there is one. */
function EdgeCache({ counts }: { counts: CacheTotals }) {
  const total = counts.hits + counts.misses;
  if (total === 0) return null;
  const ratio = Math.round((counts.hits * 1000) / total) / 10;
  return (
    <p id="edge-cache">
      <strong>Edge cache:</strong> {count(counts.hits)} of {count(total)} paid answers of cached paywalls came from the cache (
      {ratio}% hit ratio): {count(counts.hits)} upstream calls saved. Each buyer still paid.
    </p>
  );
}

/** The token of a payment's network (an event names it in its metadata), as the transactions list shows it. */
const tokenOf = (network: unknown) => NETWORK_TABLE[network as NetworkId]?.token ?? "";

const short = (value: string | null) => (value ? `${value.slice(0, 8)}…${value.slice(-4)}` : "—");

/**
 * The page's filters as the lists' filters. `payment` (a transaction id, or the hash of its transfer: the
 * `Payment-Transaction-Id` or `Payment-Reference` a buyer holds) narrows the transactions to that one and the events to
 * its request and outcome; a hash of none of the tenant's payments finds nothing.
 */
async function listFilters(c: Ctx, q: EarningsQuery): Promise<{ transactions: TransactionFilter; events: EventFilter }> {
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
    const id = q.payment.startsWith("0x")
      ? await findTransactionIdByHash(c.var.db, c.var.session.tenant.id, q.payment)
      : q.payment;
    transactions.id = id ?? "";
    events.ids = id ? [requestEventIdOf(id), outcomeEventIdOf(id)] : [];
  }
  return { transactions, events };
}

/** Why a paywall or service filter names nothing of the tenant's (then nothing is shown for it), or `undefined`. */
async function foreignFilter(c: Ctx, q: EarningsQuery): Promise<string | undefined> {
  const tenantId = c.var.session.tenant.id;
  const [paywall, service] = await Promise.all([
    q.paywall ? findPaywall(c.var.db, q.paywall) : undefined,
    q.service ? findService(c.var.db, q.service) : undefined,
  ]);
  if (q.paywall && paywall?.tenantId !== tenantId) return "None of your paywalls has this id: nothing is shown for it.";
  if (q.service && service?.tenantId !== tenantId) return "None of your services has this id: nothing is shown for it.";
  return undefined;
}

async function earningsPage(c: Ctx) {
  const tenant = c.var.session.tenant;
  const db = c.var.db;
  const explorers = networkTable(c.env);
  const [paywallChoices, serviceChoices] = await Promise.all([
    listPaywallNames(db, tenant.id, PAYWALL_CHOICES),
    listServiceNames(db, tenant.id, SERVICE_CHOICES),
  ]);
  const choices = { paywalls: paywallChoices, services: serviceChoices };
  const frame = (status: 200 | 400 | 404, body: Child) =>
    c.html(
      <Layout title="Earnings and traffic" active="earnings" tenantName={tenant.name} scripts={["copy"]}>
        <style nonce={c.var.cspNonce}>{STYLE}</style>
        {body}
      </Layout>,
      status,
    );

  const parsed = EarningsQuerySchema.safeParse(c.req.query());
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ");
    return frame(
      400,
      <>
        <Notice kind="error">These filters are not valid: {problems}. Nothing is shown until they are fixed.</Notice>
        <section>
          <Filters q={typedFilters(c.req.query())} choices={choices} />
        </section>
      </>,
    );
  }
  const q = parsed.data;
  const [foreign, filters] = await Promise.all([foreignFilter(c, q), listFilters(c, q)]);
  const history = filters.transactions;
  const days = lastUtcDays(c.var.now, CHART_DAYS);
  const since = WINDOWS.map((w) => lastUtcDays(c.var.now, w.days)[0] as string);
  const scope = statsScope(history);
  const networks = networksMatching({ network: q.network, protocol: q.protocol });
  // One read of the longest window's revenue per day and network: the totals and the chart are both drawn from it.
  const [revenue, traffic, txs, evs, cached] = await Promise.all([
    findDailyRevenue(db, tenant.id, lastUtcDays(c.var.now, LONGEST_WINDOW), scope, networks),
    findDailyTraffic(db, tenant.id, days, scope),
    findTransactionsPage(db, tenant.id, { limit: PAGE_SIZE, offset: (q.tpage - 1) * PAGE_SIZE }, filters.transactions),
    findEventsPage(db, tenant.id, { limit: PAGE_SIZE, offset: (q.epage - 1) * PAGE_SIZE }, filters.events),
    findCacheTotals(db, tenant.id, days, scope),
  ]);
  const totals = sumsPerToken(sumsSince(revenue, since));
  // The chart draws one token: the one that earned most over its 30 days (USDC when none did).
  const chartIn = chartToken(
    totals,
    WINDOWS.findIndex((w) => w.days === CHART_DAYS),
  );
  const stats = daysInToken(traffic, revenue, chartIn);
  const scopeName = q.paywall
    ? `paywall ${choices.paywalls.find((p) => p.id === q.paywall)?.name ?? q.paywall}`
    : q.service
      ? `service ${choices.services.find((s) => s.id === q.service)?.name ?? q.service}`
      : "all your paywalls";

  return frame(
    foreign ? 404 : 200,
    <>
      {foreign && <Notice kind="error">{foreign}</Notice>}
      <section aria-labelledby="totals-title">
        <h2 id="totals-title">Revenue per token</h2>
        <p class="hint">
          Completed payments per UTC day, today included, for {scopeName}; they follow the network and protocol filters too. Each
          token is counted on its own: pathUSD (Tempo's testnet) is never added to USDC.
        </p>
        {totals.length === 0 ? (
          <p>No completed payments in the last 90 days.</p>
        ) : (
          <ScrollRegion label="Revenue per token, table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Token</th>
                  {WINDOWS.map((w) => (
                    <th scope="col" class="amount">
                      {w.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {totals.map((t) => (
                  <tr>
                    <th scope="row">{t.currency}</th>
                    {t.sums.map((sum) => (
                      <td class="amount">{formatUsdcAmount(sum)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </section>
      <section aria-labelledby="charts-title">
        <h2 id="charts-title">Last {CHART_DAYS} days</h2>
        <p class="hint">
          Per UTC day, for {scopeName}. The charts follow the paywall and service filters, and the revenue chart the network and
          protocol filters too, in one token ({chartIn}: the one that earned most); the other filters apply to the lists below.
          Revenue counts completed transactions on the day they were made.
        </p>
        <div class="charts">
          <RevenueChart id="revenue-chart" days={stats} token={chartIn} />
          <TrafficChart id="traffic-chart" days={stats} />
        </div>
        <EdgeCache counts={cached} />
      </section>
      <section aria-labelledby="filters-title">
        <h2 id="filters-title">Filters</h2>
        <Filters q={q} choices={choices} />
      </section>
      <section aria-labelledby="transactions-title">
        <div class="section-head">
          <h2 id="transactions-title">Transactions</h2>
          <a href={csvHref(q)} download>
            Download CSV<span class="sr-only"> of the filtered transactions</span>
          </a>
        </div>
        <p class="hint">{`${count(txs.total)} ${txs.total === 1 ? "transaction matches" : "transactions match"}.`}</p>
        {txs.rows.length > 0 && (
          <ScrollRegion label="Transactions, table">
            <table class="cards">
              <thead>
                <tr>
                  <th scope="col">Made</th>
                  <th scope="col">Paywall</th>
                  <th scope="col" class="amount">
                    Amount
                  </th>
                  <th scope="col">Status</th>
                  <th scope="col">Network (protocol)</th>
                  <th scope="col">Payer</th>
                  <th scope="col">Transaction hash</th>
                </tr>
              </thead>
              <tbody>
                {txs.rows.map((t) => (
                  <tr>
                    <td data-label="Made" class="nowrap">
                      {formatDate(t.createdAt)}
                    </td>
                    <td data-label="Paywall">{t.paywallName ?? <code>{t.paywallId}</code>}</td>
                    <td data-label="Amount" class="amount">
                      <span>
                        {formatUsdcAmount(t.amount)} <span class="hint">{t.currency}</span>
                      </span>
                    </td>
                    <td data-label="Status">
                      <span>
                        {t.status}
                        {t.failureReason && <span class="hint"> ({t.failureReason})</span>}
                      </span>
                    </td>
                    <td data-label="Network (protocol)" class="nowrap">
                      <span>
                        {t.network} <span class="hint">({t.protocol})</span>
                      </span>
                    </td>
                    <td data-label="Payer" class="hash">
                      {t.payerAddress ? (
                        <span>
                          <Copyable id={`payer-${t.id}`} text={t.payerAddress} what={`payer ${short(t.payerAddress)}`} />{" "}
                          <ExplorerLink
                            base={explorers[t.network as NetworkId]?.explorerUrl}
                            kind="address"
                            value={t.payerAddress}
                          />
                        </span>
                      ) : (
                        "—"
                      )}
                    </td>
                    <td data-label="Transaction hash" class="hash">
                      {t.txHash ? (
                        <span>
                          <Copyable id={`tx-${t.id}`} text={t.txHash} what={`transaction hash ${short(t.txHash)}`} />{" "}
                          <ExplorerLink base={explorers[t.network as NetworkId]?.explorerUrl} kind="tx" value={t.txHash} />
                        </span>
                      ) : (
                        "—"
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
        <Pager label="Transaction pages" page={q.tpage} total={txs.total} href={(p) => hrefWith(q, { tpage: p })} />
      </section>
      <section aria-labelledby="events-title">
        <h2 id="events-title">Events</h2>
        <p class="hint">
          {`${count(evs.total)} events match: ${count(evs.stats.REQUEST)} requests, ${count(evs.stats.SUCCESS)} successes, ${count(evs.stats.ERROR)} errors.`}{" "}
          Events follow every filter: the protocol and network of their payment, and the status as its event (a started payment's
          request, a completed one's success, a failed one's error).
        </p>
        {evs.rows.length > 0 && (
          <ScrollRegion label="Events, table">
            <table class="cards">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Paywall</th>
                  <th scope="col">Type</th>
                  <th scope="col">HTTP status</th>
                  <th scope="col">Response time</th>
                  <th scope="col" class="amount">
                    Amount
                  </th>
                </tr>
              </thead>
              <tbody>
                {evs.rows.map((e) => (
                  <tr>
                    <td data-label="When" class="nowrap">
                      {formatDate(e.createdAt)}
                    </td>
                    <td data-label="Paywall">{e.paywallName ?? <code>{e.paywallId}</code>}</td>
                    <td data-label="Type" class="nowrap">
                      {e.eventType}
                    </td>
                    <td data-label="HTTP status">{e.statusCode ?? "—"}</td>
                    <td data-label="Response time" class="nowrap">
                      {e.responseTime === null ? "—" : `${count(e.responseTime)} ms`}
                    </td>
                    <td data-label="Amount" class="amount">
                      {e.amount === null ? (
                        "—"
                      ) : (
                        <span>
                          {formatUsdcAmount(e.amount)} <span class="hint">{tokenOf(e.metadata?.network)}</span>
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
        <Pager label="Event pages" page={q.epage} total={evs.total} href={(p) => hrefWith(q, { epage: p })} />
      </section>
    </>,
  );
}

/** The CSV export of the list with the same filters. */
function csvHref(q: EarningsQuery) {
  const href = hrefWith(q, { tpage: 1, epage: 1 });
  return href.replace("/dashboard/earnings", "/dashboard/earnings/transactions.csv");
}

/** One CSV field: quoted when needed, and a leading = + - @ neutralised so a spreadsheet never runs it as a formula. */
export function csvField(value: string | null | undefined): string {
  if (value === null || value === undefined) return "";
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const CSV_COLUMNS = [
  "id",
  "created_at",
  "paywall_id",
  "paywall_name",
  "service_id",
  "protocol",
  "network",
  "token",
  "amount",
  "amount_micro",
  "status",
  "failure_reason",
  "payer",
  "tx_hash",
  "settled_at",
];

const csvRow = (t: TransactionWithPaywall) =>
  [
    t.id,
    t.createdAt.toISOString(),
    t.paywallId,
    t.paywallName,
    t.serviceId,
    t.protocol,
    t.network,
    t.currency,
    formatUsdc(t.amount).replaceAll(",", ""),
    t.amount,
    t.status,
    t.failureReason,
    t.payerAddress,
    t.txHash,
    t.settledAt?.toISOString() ?? null,
  ]
    .map(csvField)
    .join(",");

/** Rows read per query while streaming an export: memory stays bounded whatever the number of rows. */
export const CSV_CHUNK = 500;

/**
 * The filtered transactions as CSV, streamed a chunk at a time (keyset paging, newest first): 100,000 rows never sit
 * in memory together.
 */
async function transactionsCsv(c: Ctx) {
  const parsed = EarningsQuerySchema.safeParse(c.req.query());
  if (!parsed.success) return earningsPage(c);
  const q = parsed.data;
  if (await foreignFilter(c, q)) return earningsPage(c);
  const filter = (await listFilters(c, q)).transactions;
  const db = c.var.db;
  const tenantId = c.var.session.tenant.id;
  const encoder = new TextEncoder();
  let after: { createdAt: Date; id: string } | undefined;
  let started = false;
  let done = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(`${CSV_COLUMNS.join(",")}\r\n`));
        return;
      }
      if (done) {
        controller.close();
        return;
      }
      const rows = await findTransactionsAfter(db, tenantId, filter, after, CSV_CHUNK);
      if (rows.length < CSV_CHUNK) done = true;
      const last = rows[rows.length - 1];
      if (last) after = { createdAt: last.createdAt, id: last.id };
      if (rows.length > 0) controller.enqueue(encoder.encode(`${rows.map(csvRow).join("\r\n")}\r\n`));
      if (done) controller.close();
    },
  });
  const day = c.var.now.toISOString().slice(0, 10);
  return c.body(stream, 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="transactions-${day}.csv"`,
  });
}

export const earningsPages = new Hono<DashboardEnv>();

earningsPages.get("/earnings", earningsPage);
earningsPages.get("/earnings/transactions.csv", transactionsCsv);
