/** What the earnings page shows: small components over the view-model of `data.ts`. */
import type { Child } from "hono/jsx";
import { NETWORK_TABLE, type NetworkEntry } from "../../../core/money/network-table.ts";
import { NETWORK_IDS, type NetworkId } from "../../../core/money/networks.ts";
import { formatUsdcAmount } from "../../../core/money/usdc.ts";
import type { CacheTotals } from "../../../db/daily-stats.ts";
import type { EventWithPaywall } from "../../../db/events.ts";
import { PROTOCOLS, TRANSACTION_STATUSES } from "../../../db/schema.ts";
import type { TransactionWithPaywall } from "../../../db/transactions.ts";
import { formatCount as count } from "../../../lib/digits.ts";
import { RevenueChart, TrafficChart } from "../../charts.tsx";
import { formatDate } from "../../format.ts";
import { Copyable, Layout, Notice, ScrollRegion } from "../../layout.tsx";
import { CHART_DAYS, type Choices, type Earnings, PAGE_SIZE, PAYWALL_CHOICES, WINDOWS } from "./data.ts";
import { csvHref, type EarningsQuery, hrefWith } from "./query.ts";

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

type Explorers = Record<NetworkId, NetworkEntry>;

/** The page's frame: the layout, the page's style and its body. */
export function EarningsFrame({ tenantName, nonce, children }: { tenantName: string; nonce: string; children: Child }) {
  return (
    <Layout title="Earnings and traffic" active="earnings" tenantName={tenantName} scripts={["copy"]}>
      <style nonce={nonce}>{STYLE}</style>
      {children}
    </Layout>
  );
}

/** Filters that do not parse: what is wrong, and the form with what was typed. Nothing else is shown. */
export function InvalidFilters({
  problems,
  typed,
  choices,
}: {
  problems: string;
  typed: Partial<EarningsQuery>;
  choices: Choices;
}) {
  return (
    <>
      <Notice kind="error">These filters are not valid: {problems}. Nothing is shown until they are fixed.</Notice>
      <section>
        <Filters q={typed} choices={choices} />
      </section>
    </>
  );
}

function Totals({ totals, scopeName }: Pick<Earnings, "totals" | "scopeName">) {
  return (
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
  );
}

/**
 * Sessions (buyers paying by vouchers from a deposit), per token: what the vouchers charged, the channels still open,
 * and what was charged but is not in the wallet yet (settled in batches). Shown once the tenant has a channel.
 */
function Sessions({ sessions }: Pick<Earnings, "sessions">) {
  if (sessions.length === 0) return null;
  return (
    <section aria-labelledby="sessions-title" id="sessions">
      <h2 id="sessions-title">Sessions</h2>
      <p class="hint">
        Every session channel of all your paywalls, whatever the filters. Charged calls are settled to your wallet in batches: the
        last column is earned but not in your wallet yet.
      </p>
      <ScrollRegion label="Sessions, table">
        <table class="cards">
          <thead>
            <tr>
              <th scope="col">Token</th>
              <th scope="col" class="amount">
                Session revenue
              </th>
              <th scope="col" class="amount">
                Open channels
              </th>
              <th scope="col" class="amount">
                Charged, not yet settled
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr>
                <td data-label="Token">
                  <strong>{s.currency}</strong>
                </td>
                <td data-label="Session revenue" class="amount">
                  {formatUsdcAmount(s.charged)}
                </td>
                <td data-label="Open channels" class="amount">
                  {count(s.open)}
                </td>
                <td data-label="Charged, not yet settled" class="amount">
                  {formatUsdcAmount(s.unsettled)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </section>
  );
}

function Charts({ scopeName, chartIn, stats, cached }: Pick<Earnings, "scopeName" | "chartIn" | "stats" | "cached">) {
  return (
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
  );
}

/** A payer address or transaction hash, copyable, with its explorer link; a dash when there is none. */
function HashCell({
  id,
  value,
  what,
  kind,
  explorer,
}: {
  id: string;
  value: string | null;
  what: string;
  kind: "tx" | "address";
  explorer: string | null | undefined;
}) {
  return value ? (
    <span>
      <Copyable id={id} text={value} what={`${what} ${short(value)}`} />{" "}
      <ExplorerLink base={explorer} kind={kind} value={value} />
    </span>
  ) : (
    "—"
  );
}

function TransactionRow({ t, explorers }: { t: TransactionWithPaywall; explorers: Explorers }) {
  const explorer = explorers[t.network as NetworkId]?.explorerUrl;
  return (
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
        <HashCell id={`payer-${t.id}`} value={t.payerAddress} what="payer" kind="address" explorer={explorer} />
      </td>
      <td data-label="Transaction hash" class="hash">
        <HashCell id={`tx-${t.id}`} value={t.txHash} what="transaction hash" kind="tx" explorer={explorer} />
      </td>
    </tr>
  );
}

function Transactions({ q, page, explorers }: { q: EarningsQuery; page: Earnings["transactions"]; explorers: Explorers }) {
  return (
    <section aria-labelledby="transactions-title">
      <div class="section-head">
        <h2 id="transactions-title">Transactions</h2>
        <a href={csvHref(q)} download>
          Download CSV<span class="sr-only"> of the filtered transactions</span>
        </a>
      </div>
      <p class="hint">{`${count(page.total)} ${page.total === 1 ? "transaction matches" : "transactions match"}.`}</p>
      {page.rows.length > 0 && (
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
              {page.rows.map((t) => (
                <TransactionRow t={t} explorers={explorers} />
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      <Pager label="Transaction pages" page={q.tpage} total={page.total} href={(p) => hrefWith(q, { tpage: p })} />
    </section>
  );
}

function EventRow({ e }: { e: EventWithPaywall }) {
  return (
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
  );
}

function Events({ q, page }: { q: EarningsQuery; page: Earnings["events"] }) {
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <p class="hint">
        {`${count(page.total)} events match: ${count(page.stats.REQUEST)} requests, ${count(page.stats.SUCCESS)} successes, ${count(page.stats.ERROR)} errors.`}{" "}
        Events follow every filter: the protocol and network of their payment, and the status as its event (a started payment's
        request, a completed one's success, a failed one's error).
      </p>
      {page.rows.length > 0 && (
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
              {page.rows.map((e) => (
                <EventRow e={e} />
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      <Pager label="Event pages" page={q.epage} total={page.total} href={(p) => hrefWith(q, { epage: p })} />
    </section>
  );
}

/** The page for a valid query. */
export function EarningsView({
  q,
  data,
  choices,
  explorers,
}: {
  q: EarningsQuery;
  data: Earnings;
  choices: Choices;
  explorers: Explorers;
}) {
  return (
    <>
      {data.foreign && <Notice kind="error">{data.foreign}</Notice>}
      <Totals totals={data.totals} scopeName={data.scopeName} />
      <Sessions sessions={data.sessions} />
      <Charts scopeName={data.scopeName} chartIn={data.chartIn} stats={data.stats} cached={data.cached} />
      <section aria-labelledby="filters-title">
        <h2 id="filters-title">Filters</h2>
        <Filters q={q} choices={choices} />
      </section>
      <Transactions q={q} page={data.transactions} explorers={explorers} />
      <Events q={q} page={data.events} />
    </>
  );
}
