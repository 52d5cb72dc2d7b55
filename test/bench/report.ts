// The benchmark's output: a text table (default) or the same figures as JSON (`--json`).
import type { QueryPlan } from "./explain.ts";
import type { Accounting, LoadResult } from "./load.ts";
import type { Overhead } from "./overhead.ts";
import type { RecordsReport } from "./records.ts";
import type { Scenario } from "./scenarios.ts";
import type { StartupReport } from "./startup.ts";
import type { Verdict } from "./targets.ts";

export interface ScenarioReport {
  name: string;
  target: Scenario["target"];
  method: string;
  path: string;
  read: boolean;
  connections: number;
  durationS: number;
  /** Statuses the scenario expects; `unexpected` counts the others (load, prime and accounting passes). */
  expect?: number[];
  unexpected?: number;
  /** Errors and unexpected statuses in the slices measured alongside (paired floor, companion). */
  alongsideBad?: number;
  /** Set when the scenario did not run, e.g. "endpoint missing". */
  skipped?: string;
  load?: LoadResult;
  /** The storage floor measured in slices interleaved with this scenario's (app scenarios). */
  pairedFloor?: LoadResult;
  /** Which reference that was (`Scenario.floor`). */
  floorName?: string;
  /** The paid scenario: latency without the stand-ins' own time, and where it goes. */
  overhead?: Overhead;
  /** The same, one request at a time (no queueing). */
  overheadAlone?: Overhead;
  /** The `compareWith` scenario measured in slices interleaved with this one's (the scale pair). */
  companion?: { name: string; load: LoadResult };
  accounting?: Accounting;
  /** A scenario with `noStandIns`: calls the stand-in facilitator and upstream got during its load (`noUpstream`: the upstream's; `noFacilitator`: the facilitator's). */
  standInCalls?: number;
  /** EXPLAIN QUERY PLAN of the statements the handler's db call issues, over the seeded database. */
  queryPlans?: QueryPlan[];
  /** req/s relative to the reference fixtures measured in this run. */
  ratioToCeiling?: number;
  ratioToFloor?: number;
  /** p99 relative to the storage floor's p99. */
  p99ToFloor?: number;
  /** workerd CPU per request relative to the storage floor's (noise-robust companion of ratioToFloor). */
  cpuToFloor?: number;
  seedMs?: number;
}

export interface BenchReport {
  startedAt: string;
  elapsedS: number;
  machine: { cpus: number; node: string };
  bundle: {
    bundler: string;
    bytes: number;
    gzipKiB: number;
    wranglerGzipKiB: number | undefined;
    ceilingKiB: number;
    buildMs: number;
  };
  startup?: StartupReport;
  /** The records of N paid requests reaching D1 (records.ts). */
  records?: RecordsReport;
  scenarios: ScenarioReport[];
  targets: (Verdict & { name: string })[];
}

const num = (n: number | undefined, digits = 2) => (n === undefined || !Number.isFinite(n) ? "-" : n.toFixed(digits));

interface Column {
  head: string;
  cell: (s: ScenarioReport, l: LoadResult) => string;
}

const COLUMNS: Column[] = [
  { head: "req/s", cell: (_, l) => num(l.rps, 0) },
  { head: "p50 ms", cell: (_, l) => num(l.p50) },
  { head: "p99 ms", cell: (_, l) => num(l.p99) },
  { head: "errors", cell: (_, l) => String(l.errors) },
  { head: "non-2xx", cell: (_, l) => String(l.non2xx) },
  { head: "unexpected", cell: (s) => String(s.unexpected ?? "-") },
  { head: "D1 st/req", cell: (s) => num(s.accounting?.statementsPerReq) },
  { head: "DO/req", cell: (s) => num(s.accounting?.doCallsPerReq) },
  { head: "CPU ms/req", cell: (_, l) => num(l.cpuMsPerReq) },
  { head: "×ceiling", cell: (s) => num(s.ratioToCeiling) },
  { head: "floor req/s", cell: (s) => num(s.pairedFloor?.rps, 0) },
  { head: "×floor", cell: (s) => num(s.ratioToFloor) },
  { head: "p99×floor", cell: (s) => num(s.p99ToFloor) },
  { head: "CPU×floor", cell: (s) => num(s.cpuToFloor) },
];

/** The statement with long column lists elided (the JSON output keeps it whole). */
function shortSql(sql: string): string {
  const short = sql.replace(
    /^(select|insert into \S+|update \S+ set)\s+(.{60,}?)\s+(from|values|where)\b/is,
    (_, verb, cols, next) => (cols.length > 60 ? `${verb} … ${next}` : `${verb} ${cols} ${next}`),
  );
  return short.length > 220 ? `${short.slice(0, 217)}…` : short;
}

export function renderTable(report: BenchReport): string {
  const head = ["scenario", ...COLUMNS.map((c) => c.head)];
  const rows = report.scenarios.map((s) =>
    s.load ? [s.name, ...COLUMNS.map((c) => c.cell(s, s.load!))] : [s.name, `skipped: ${s.skipped ?? "?"}`],
  );
  const full = rows.filter((r) => r.length === head.length);
  const widths = head.map((h, i) => Math.max(h.length, ...full.map((r) => r[i]!.length), i === 0 ? 0 : 0));
  widths[0] = Math.max(widths[0]!, ...rows.map((r) => r[0]!.length));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const out: string[] = [];
  out.push(line(head), widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) out.push(r.length === head.length ? line(r) : `${r[0]!.padEnd(widths[0]!)}  ${r[1]}`);
  out.push(
    "",
    "×ceiling: req/s over the ceiling's. floor req/s: the storage floor measured in slices interleaved with the scenario's;",
    "×floor, p99×floor and CPU×floor compare with it (with the standalone floor run for the reference rows).",
    "CPU ms/req: CPU time of the workerd process (all workers, D1 and DO included) per request. Latencies: all responses.",
  );
  const otherFloors = report.scenarios.filter((s) => s.floorName && s.floorName !== "ref: storage floor");
  for (const s of otherFloors) {
    const f = s.pairedFloor!;
    out.push(
      `${s.name}: measured alongside "${s.floorName}" (${num(f.rps, 0)} req/s, p50 ${num(f.p50)} ms, p99 ${num(f.p99)} ms, ` +
        `${num(f.cpuMsPerReq)} CPU ms/req).`,
    );
  }
  out.push("");
  const b = report.bundle;
  out.push(
    `bundle (${b.bundler}): ${num(b.bytes / 1024, 1)} KiB, gzip ${num(b.wranglerGzipKiB ?? b.gzipKiB)} KiB` +
      ` (${b.wranglerGzipKiB === undefined ? "gzip -6 here" : `wrangler; gzip -6 here: ${num(b.gzipKiB)} KiB`}); ceiling ${b.ceilingKiB} KiB gzip`,
  );
  const r = report.records;
  if (r)
    out.push(
      `records of ${r.requests} paid requests reaching D1 (records.ts, every statement the bundle issued counted): ` +
        `${r.paid} paid, ${r.visible} visible as COMPLETED; ${r.statements} D1 statements = ${num(r.statementsPer1000)} per 1,000 (${Object.entries(
          r.by ?? {},
        )
          .map(([k, n]) => `${k} ${n}`)
          .join(", ")}); ` +
        `answer → visible p50 ${num(r.delay.p50, 0)} ms, p99 ${num(r.delay.p99, 0)} ms, max ${num(r.delay.max, 0)} ms`,
    );
  const st = report.startup;
  if (st) {
    const sdks = (list: string[] | undefined) => (list === undefined ? "not checked" : list.length ? list.join(", ") : "none");
    out.push(
      "",
      "startup (test/bench/startup.ts: fresh isolates of the bundle in workerd; CPU time of the workerd process):",
      `  global scope, per isolate: ${num(st.startupMs)} ms CPU (rounds: ${st.roundsMs.map((m) => num(m)).join(", ")}; ` +
        `${st.isolatesPerRound} isolates each) = ${num((st.startupMs / st.limitMs) * 100, 0)}% of Cloudflare's ${st.limitMs} ms ` +
        `startup limit (${st.limitSource}); budget ${st.budgetMs} ms`,
      "  first request to each app on a fresh isolate (after its startup), and the same request warm:",
      ...st.firstRequests.map(
        (r) => `    ${`${r.app}:`.padEnd(10)} ${r.name}: ${num(r.firstMs)} ms CPU, warm ${num(r.warmMs)} ms (${r.status})`,
      ),
      `  payment SDK modules evaluated: at startup ${sdks(st.atStartup)}; by the API (${st.api?.requests.join(", ") ?? "-"}) ${sdks(st.api?.paymentSdks)};` +
        ` by an x402 challenge ${sdks(st.x402?.paymentSdks)}; by an MPP challenge ${sdks(st.mpp?.paymentSdks)}`,
    );
  }
  const accounted = report.scenarios.filter((s) => s.accounting);
  if (accounted.length > 0) {
    out.push(
      "",
      "accounting pass (SERVER_TIMING=on, separate worker, after the load, 4 at a time): per request; ms are wall time",
    );
    for (const s of accounted) {
      const a = s.accounting!;
      out.push(
        `  ${s.name}: ${num(a.statementsPerReq)} D1 statements (${num(a.d1MsPerReq)} ms), ${num(a.doCallsPerReq)} DO calls (${num(a.doMsPerReq)} ms), ` +
          `handler chain ${num(a.appMsPerReq)} ms, ${(a.bytesPerReq / 1024).toFixed(1)} KiB body; ${a.requests} requests` +
          (a.non2xx || a.missingHeader ? `; ${a.non2xx} non-2xx, ${a.missingHeader} without header` : ""),
      );
      for (const step of a.steps ?? []) {
        out.push(
          `    ${step.step}: ${num(step.statementsPerReq)} D1 statements, ${num(step.doCallsPerReq)} DO calls (${step.requests} requests)`,
        );
      }
    }
  }
  for (const s of report.scenarios.filter((r) => r.overhead)) {
    const o = s.overhead!;
    out.push(
      "",
      `${s.name}: its own overhead (stand-in facilitator and upstream answer at once in their own process; their handlers' time is subtracted per request):`,
      `  ${o.requests} requests: latency p50 ${num(o.latency.p50)} / p99 ${num(o.latency.p99)} ms; stand-ins' own time p50 ${num(o.standIns.p50)} / p99 ${num(o.standIns.p99)} ms;` +
        ` added by the gateway p50 ${num(o.added.p50)} / p99 ${num(o.added.p99)} ms; ${num(s.load?.cpuMsPerReq)} workerd CPU ms/req` +
        (s.pairedFloor ? ` (${s.floorName}: ${num(s.pairedFloor.cpuMsPerReq)})` : ""),
      "  where it goes (p50 / mean ms; each phase includes the loopback hops to the next call):",
      ...o.phases.map((p) => `    ${num(p.p50).padStart(7)} / ${num(p.mean).padStart(7)}  ${p.phase}`),
    );
    const a = s.overheadAlone;
    if (a) {
      out.push(
        `  one at a time (1 connection, ${a.requests} requests): latency p50 ${num(a.latency.p50)} / p99 ${num(a.latency.p99)} ms;` +
          ` stand-ins p50 ${num(a.standIns.p50)} ms; added by the gateway p50 ${num(a.added.p50)} / p99 ${num(a.added.p99)} ms`,
        ...a.phases.map((p) => `    ${num(p.p50).padStart(7)} / ${num(p.mean).padStart(7)}  ${p.phase}`),
      );
    }
  }
  const paired = report.scenarios.filter((s) => s.companion);
  if (paired.length > 0) {
    out.push("", "interleaved comparisons (slices alternating with the scenario's, same machine state):");
    for (const s of paired) {
      const c = s.companion!.load;
      out.push(
        `  ${s.name}: p50 ${num(s.load?.p50)} ms, ${num(s.load?.rps, 0)} req/s; ${s.companion!.name} meanwhile: p50 ${num(c.p50)} ms, ${num(c.rps, 0)} req/s` +
          ` (${c.errors} errors, ${c.non2xx} non-2xx)`,
      );
    }
  }
  const explained = report.scenarios.filter((s) => s.queryPlans?.length);
  if (explained.length > 0) {
    out.push(
      "",
      "query plans (EXPLAIN QUERY PLAN of the handler's statements over the seeded database; rows read and SQL ms: D1's meta):",
    );
    for (const s of explained) {
      out.push(`  ${s.name}:`);
      for (const [i, q] of s.queryPlans!.entries()) {
        const cost = q.rowsRead === undefined ? "" : ` (${q.rowsRead} rows read, ${num(q.ms)} ms)`;
        out.push(`    [${i + 1}] ${shortSql(q.sql)}${cost}`);
        for (const line of q.plan) out.push(`          ${line}`);
        for (const flag of q.flags) out.push(`        ! ${flag}`);
      }
    }
  }
  out.push("", "targets:");
  for (const t of report.targets) out.push(`  ${t.status.padEnd(4)}  ${t.name}: ${t.detail}`);
  out.push(
    "",
    `${report.machine.cpus} CPUs, Node ${report.machine.node}; ${report.elapsedS.toFixed(0)} s in all. Load: closed loop, ${report.scenarios[0]?.connections ?? "-"} connections, fixed duration per scenario then drained, after a warm-up.`,
  );
  return out.join("\n");
}
