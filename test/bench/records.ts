// The records of N paid requests reaching D1: how many D1 statements they cost in all (on the request path or later,
// from Durable Objects, alarms, queue consumers: the `app-count` worker counts every statement the bundle issues,
// fixtures/d1-count.ts) and how long after each request's answer its transaction is visible in D1 as COMPLETED
// (polled every 50 ms while the requests run, and after; each poll is one query, so a delay is known to within a
// poll's period and its query's time). It measures whatever the code does: the statements are reported apart by where
// they were issued (the requests, e.g. their paywall's state read; the payment objects; the queue consumers writing
// the records in batches; crons).
import type { Seeded, Vars } from "./scenarios.ts";

export const RECORDS = "paid records reaching D1";

export interface RecordsReport {
  /** Sent (fewer than asked when the run's budget ran out first). */
  requests: number;
  /** Answered 200 (the others are not waited for). */
  paid: number;
  /** Statements the app-count worker issued from the first request until the last record was visible (+ 1 s). */
  statements: number;
  /** Of them, by where they were issued (requests, objects, queues, crons). */
  by?: Record<string, number>;
  statementsPer1000: number;
  /** Of the paid requests, how many were seen COMPLETED in D1 before the wait ended. */
  visible: number;
  /** Answer → visible as COMPLETED, per request (ms). */
  delay: { p50: number; p99: number; max: number };
}

const POLL_MS = 50;
const WAIT_MS = 15_000;

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

export async function measureRecords(options: {
  /** The app-count worker (its `/__d1-count`) and its payment origin. */
  countUrl: string;
  paymentsUrl: string;
  d1: D1Database;
  /** The paid scenario's seed on that origin (one step, a fresh payment per sequence). */
  seeded: Seeded;
  paywallId: string;
  requests: number;
  concurrency: number;
  /** No request is sent after this time (Date.now()): the run's budget; the report counts those sent. */
  sendUntil: number;
  log: (msg: string) => void;
}): Promise<RecordsReport> {
  const step = options.seeded.steps![0]!;
  const count = async (reset: boolean) =>
    (await (await fetch(`${options.countUrl}/__d1-count${reset ? "?reset" : ""}`)).json()) as {
      statements: number;
      by: Record<string, number>;
    };
  await count(true);
  const since = Date.now() - 1000;
  const answered = new Map<string, number>();
  const seen = new Map<string, number>();
  let sending = true;
  // A record first seen by a poll counts as visible when that poll was sent (the query may read it later): a delay
  // is thus never overstated by the poll's own time, and a record written before its answer shows 0.
  const poll = async () => {
    const sent = Date.now();
    const rows = await options.d1
      .prepare("SELECT tx_hash FROM transactions WHERE paywall_id = ?1 AND status = 'COMPLETED' AND created_at >= ?2")
      .bind(options.paywallId, since)
      .all<{ tx_hash: string }>();
    for (const { tx_hash } of rows.results) if (!seen.has(tx_hash)) seen.set(tx_hash, sent);
  };
  const poller = (async () => {
    const until = () => !sending && [...answered.keys()].every((h) => seen.has(h));
    for (let deadline = Number.POSITIVE_INFINITY; !until() && Date.now() < deadline; ) {
      await poll();
      if (!sending && deadline === Number.POSITIVE_INFINITY) deadline = Date.now() + WAIT_MS;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();
  let next = 0;
  const base = 2 ** 43 + Math.floor(Math.random() * 2 ** 30);
  const worker = async () => {
    while (next < options.requests && Date.now() < options.sendUntil) {
      const vars: Vars = { seq: String(base + next++) };
      const path = (step.path as (v: Vars) => string)(vars);
      const res = await fetch(options.paymentsUrl + path, { headers: step.headers!(vars) });
      await res.arrayBuffer();
      const settled = res.headers.get("PAYMENT-RESPONSE");
      if (res.status === 200 && settled) {
        const tx = (JSON.parse(atob(settled)) as { transaction: string }).transaction;
        answered.set(tx, Date.now());
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  sending = false;
  await poller;
  await new Promise((r) => setTimeout(r, 1000)); // a batch still in flight after the last record counts too
  const { statements, by } = await count(false);
  const delays = [...answered].filter(([h]) => seen.has(h)).map(([h, at]) => Math.max(0, seen.get(h)! - at));
  delays.sort((a, b) => a - b);
  const report: RecordsReport = {
    requests: next,
    paid: answered.size,
    statements,
    by,
    statementsPer1000: Math.round((statements / Math.max(1, answered.size)) * 1000 * 100) / 100,
    visible: delays.length,
    delay: { p50: quantile(delays, 0.5), p99: quantile(delays, 0.99), max: delays.at(-1) ?? Number.NaN },
  };
  options.log(
    `  ${report.paid}/${report.requests} paid, ${report.visible} visible; ${statements} D1 statements ` +
      `(${report.statementsPer1000} per 1,000; ${Object.entries(by)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ")}); answer → visible p50 ${report.delay.p50} ms, p99 ${report.delay.p99} ms`,
  );
  return report;
}
