// `npm run bench [-- --json] [--out <file.json>] [--only <name|…>] [--duration <s>] [--connections <n>] [--strict]
//  [--script <bundle.js>]`
// (`npm run -s bench -- --json` for JSON alone on stdout: without -s, npm prints its own banner there first.)
//
// Builds the production bundle (wrangler deploy --dry-run), measures its startup on fresh isolates (startup.ts), runs
// it and the two reference fixtures in one workerd through Miniflare's API (not `wrangler dev`), seeds through the app's own code, drives each scenario with a
// closed-loop load (load.ts) on 127.0.0.1 for a fixed duration, then prints a table (or JSON) and the targets. Bounded: everything stops within
// the time budget, and the process exits by itself. See test/bench/README.md.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Miniflare } from "miniflare";
import { buildApp, bundleAppWrapper, bundleFixture, prebuiltApp } from "./build.ts";
import { cpuSampler, findWorkerd } from "./cpu.ts";
import { explain } from "./explain.ts";
import { account, prime, probe, type RawLoad, runLoad, summarize, unexpectedIn } from "./load.ts";
import { overhead, type Traced } from "./overhead.ts";
import { measureRecords, RECORDS, type RecordsReport } from "./records.ts";
import { type BenchReport, renderTable, type ScenarioReport } from "./report.ts";
import { DEFAULT_FLOOR, DEFAULTS, REFERENCES, recordsSeed, SCENARIOS, type Scenario, type Seeded } from "./scenarios.ts";
import { createContext, remoteD1, seedBase } from "./seed.ts";
import { type StandIns, startStandIns } from "./stand-ins.ts";
import { type Metafile, measureStartup } from "./startup.ts";
import { TARGETS } from "./targets.ts";
import { applyMigrations, readVars, startWorkers } from "./workers.ts";

const ROOT = resolve(import.meta.dirname, "../..");
/** A run takes at most 3 minutes; keep a margin for teardown. */
const BUDGET_MS = 170_000;

const { values: args } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    only: { type: "string" },
    duration: { type: "string" },
    connections: { type: "string" },
    strict: { type: "boolean", default: false },
    out: { type: "string" },
    "stand-in-port": { type: "string" },
    script: { type: "string" },
    "no-startup": { type: "boolean", default: false },
    records: { type: "string" },
  },
});

// The project's build resolves paths from the working directory.
process.chdir(ROOT);
const started = Date.now();
const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${msg}\n`);

let mf: Miniflare | undefined;
let tmp: string | undefined;
let standIns: StandIns | undefined;

async function cleanup() {
  standIns?.stop();
  standIns = undefined;
  const m = mf;
  mf = undefined;
  await m?.dispose().catch(() => {});
  if (tmp) await rm(tmp, { recursive: true, force: true }).catch(() => {});
}

const watchdog = setTimeout(() => {
  log(`time budget of ${BUDGET_MS / 1000} s exceeded: stopping`);
  void cleanup().finally(() => process.exit(2));
}, BUDGET_MS + 5_000);
watchdog.unref();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanup().finally(() => process.exit(130)));
}

/** Whether the records measurement runs: in a whole run, or when `--only` names it. */
const recordsWanted = () =>
  !args.only ||
  args.only
    .toLowerCase()
    .split("|")
    .some((w) => RECORDS.toLowerCase().includes(w.trim()));

function selected(): Scenario[] {
  if (!args.only) return SCENARIOS;
  // Names contain commas ("list, 100,000 paywalls"): `|` separates; `,` too when the whole text matches no name.
  const only = args.only.toLowerCase();
  const whole = SCENARIOS.some((s) => s.name.toLowerCase().includes(only.trim()));
  const wanted = (only.includes("|") ? only.split("|") : whole ? [only] : only.split(",")).map((s) => s.trim());
  const picked = SCENARIOS.filter((s) => wanted.some((w) => s.name.toLowerCase().includes(w)));
  if (picked.length === 0 && !recordsWanted())
    throw new Error(`--only ${args.only}: no scenario matches (${[...SCENARIOS.map((s) => s.name), RECORDS].join(" | ")})`);
  return picked;
}

async function main(): Promise<number> {
  const scenarios = selected();
  const positive = (flag: string, value: string | undefined, integer: boolean) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
      throw new Error(`--${flag} ${value}: expected a positive number`);
    return n;
  };
  const durationOverride = positive("duration", args.duration, false);
  const connectionsOverride = positive("connections", args.connections, true);
  // The paid scenario's facilitator and upstream; any free port unless given.
  const standInPort = args["stand-in-port"] === undefined ? 0 : positive("stand-in-port", args["stand-in-port"], true)!;

  // On tmpfs when there is one: storage then costs what workerd's D1/DO machinery costs, not what the disk's fsync costs.
  tmp = await mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "bench-"));
  log("building the production bundle and the fixtures");
  const fixture = (name: string) =>
    bundleFixture(join(import.meta.dirname, `fixtures/${name}.ts`), join(tmp!, `${name}/index.js`));
  const [app, ceilingScript, floorScript, d1Script, outboundScript, peerScript, vars] = await Promise.all([
    args.script ? prebuiltApp(resolve(args.script)) : buildApp(join(tmp, "app")),
    fixture("ceiling"),
    fixture("storage-floor"),
    fixture("d1-remote"),
    fixture("outbound"),
    fixture("x402-peer"),
    readVars(ROOT),
  ]);
  log(
    `bundle (${app.bundler}) ${(app.bytes / 1024).toFixed(1)} KiB, gzip ${app.wranglerGzipKiB ?? app.gzipKiB} KiB (${app.ms} ms)`,
  );
  // Before any load: the probes start workerd processes of their own, one at a time, on a machine otherwise idle.
  // `--no-startup` (development, on a loaded machine): no startup figures, their targets SKIP.
  const startup = args["no-startup"]
    ? undefined
    : await measureStartup({
        root: ROOT,
        scriptPath: app.scriptPath,
        vars,
        storageDir: join(tmp, "startup"),
        metafile: app.metafilePath ? (JSON.parse(await readFile(app.metafilePath, "utf8")) as Metafile) : undefined,
        log,
      });
  if (startup)
    log(
      `startup: ${startup.startupMs} ms CPU per isolate (limit ${startup.limitMs} ms); first requests: ` +
        startup.firstRequests.map((r) => `${r.name} ${r.firstMs} ms`).join(", ") +
        ` (${(startup.ms / 1000).toFixed(1)} s)`,
    );

  const countScript = await bundleAppWrapper(join(import.meta.dirname, "fixtures/d1-count.ts"), app.scriptPath, "d1-count.js");
  const stand = await startStandIns(standInPort);
  standIns = stand;
  const workers = await startWorkers({
    standIns: stand.address,
    storageDir: join(tmp, "storage"),
    appScript: app.scriptPath,
    ceilingScript,
    floorScript,
    d1Script,
    outboundScript,
    peerScript,
    countScript,
    vars,
  });
  mf = workers.mf;
  const cpu = cpuSampler(findWorkerd());
  log("workerd up");
  const d1 = remoteD1(workers.urls.d1);
  await applyMigrations(d1, ROOT);
  log("migrations applied");
  // Seeding's client coalesces concurrent batches into one round trip each (seed.ts RemoteD1Options).
  const ctx = createContext(
    remoteD1(workers.urls.d1, { coalesceBatches: true }),
    workers.urls.app,
    (msg) => log(`  seed: ${msg}`),
    workers.urls.payments,
    workers.urls.peer,
    workers.urls["payments-timing"],
  );
  await seedBase(ctx);
  log(`seeded ${ctx.base.length} tenants × ${ctx.base[0]?.keys.length} keys`);

  const reports: ScenarioReport[] = [];
  const seededOf = new Map<string, Seeded>();
  /**
   * The reference an app scenario is measured alongside (`floor`, default the storage floor), seeded once. A pair-only
   * reference is primed and warmed up the first time it is needed (the standalone ones were, in their own run).
   */
  const floorOf = async (scenario: Scenario, connections: number) => {
    if (scenario.target !== "app") return undefined;
    const ref = REFERENCES.find((r) => r.name === (scenario.floor ?? DEFAULT_FLOOR));
    if (!ref) throw new Error(`${scenario.name}: no reference named ${scenario.floor}`);
    let seeded = seededOf.get(ref.name);
    if (!seeded && ref.pairOnly) {
      seeded = ref.seed ? await ref.seed(ctx) : { keys: [] };
      await prime(workers.urls.floor, ref, seeded);
      await runLoad(workers.urls.floor, ref, seeded, { connections, duration: DEFAULTS.warmup / 2 });
      seededOf.set(ref.name, seeded);
    }
    return seeded ? { scenario: ref, seeded } : undefined;
  };
  const queue = [...REFERENCES.filter((r) => !r.pairOnly), ...scenarios];
  for (const scenario of queue) {
    const connections = connectionsOverride ?? scenario.connections ?? DEFAULTS.connections;
    const duration = durationOverride ?? scenario.duration ?? DEFAULTS.duration;
    const warmup = Math.min(DEFAULTS.warmup, duration);
    const rounds = Math.max(1, Math.min(DEFAULTS.rounds, Math.floor(duration)));
    const paired = scenario.target === "app" && (scenario.floor !== undefined || seededOf.has(DEFAULT_FLOOR));
    const floorSlice = (duration / rounds) * DEFAULTS.floorShare;
    const companion = scenario.compareWith ? SCENARIOS.find((s) => s.name === scenario.compareWith) : undefined;
    const companionSeeded = companion ? seededOf.get(companion.name) : undefined;
    const expected = scenario.expect ?? [200];
    const report: ScenarioReport = {
      name: scenario.name,
      target: scenario.target,
      method: scenario.method,
      path: scenario.path,
      read: scenario.read,
      connections,
      durationS: duration,
      expect: expected,
    };
    reports.push(report);

    // This scenario's load plus ≈ 3 s (probe, prime, accounting, explain); checked again after seeding, whose time is
    // not known before: a scenario that would not fit is skipped, so the table is always printed within the budget.
    const needed = warmup + duration + (paired ? rounds * floorSlice : 0) + (companionSeeded ? duration : 0) + 3;
    const remaining = () => BUDGET_MS - (Date.now() - started);
    if (remaining() < needed * 1000) {
      report.skipped = "time budget";
      log(`${scenario.name}: skipped (time budget)`);
      continue;
    }
    const payments = scenario.target === "app" && scenario.origin === "payment";
    const url = payments ? workers.urls.payments : workers.urls[scenario.target];
    const missing = () => {
      report.skipped = "endpoint missing";
      log(`${scenario.name}: skipped (endpoint missing)`);
    };
    if (scenario.target === "app" && !scenario.pathFromSeed && (await probe(url, scenario, ctx.keys[0])) === 404) {
      missing();
      continue;
    }
    const seedStart = Date.now();
    const seeded: Seeded = scenario.seed ? await scenario.seed(ctx) : { keys: [] };
    const floor = paired ? await floorOf(scenario, connections) : undefined;
    report.seedMs = Date.now() - seedStart;
    seededOf.set(scenario.name, seeded);
    if (scenario.target === "app" && scenario.pathFromSeed && (await probe(url, scenario, undefined, seeded)) === 404) {
      missing();
      continue;
    }
    if (remaining() < (needed - 3) * 1000) {
      report.skipped = "time budget (after seeding)";
      log(`${scenario.name}: skipped (time budget, after ${report.seedMs} ms of seeding)`);
      continue;
    }

    log(
      `${scenario.name}: ${warmup} s warm-up + ${duration} s` +
        (floor ? ` in ${rounds} slices, each followed by ${floorSlice} s of "${floor.scenario.name}"` : "") +
        (companionSeeded ? ` and ${duration / rounds} s of "${companion!.name}"` : "") +
        `, ${connections} connections, ${seeded.keys.length} keys${report.seedMs > 50 ? `, seeded in ${report.seedMs} ms` : ""}`,
    );
    const phases: string[] = [];
    let phaseStart = Date.now();
    const phase = (name: string) => {
      phases.push(`${name} ${((Date.now() - phaseStart) / 1000).toFixed(1)}`);
      phaseStart = Date.now();
    };
    let statusCounts: Record<string, number> = {};
    const addStatuses = (counts: Record<string, number>) => {
      for (const [code, n] of Object.entries(counts)) statusCounts[code] = (statusCounts[code] ?? 0) + n;
    };
    if (scenario.target !== "ceiling") addStatuses(await prime(url, scenario, seeded));
    if (companionSeeded) await prime(url, companion!, companionSeeded);
    phase("prime");
    await runLoad(url, scenario, seeded, { connections, duration: warmup });
    phase("warm-up");
    // The paid scenario: the stand-ins' log of the measured slices only (prime and warm-up calls dropped).
    if (seeded.tagOf || scenario.noStandIns || scenario.noUpstream || scenario.noFacilitator) await stand.takeLog();
    if (floor) {
      // Interleaved with the storage floor (and the companion), so all see the same machine: the ratios use these.
      const own: RawLoad[] = [];
      const floorLoads: RawLoad[] = [];
      const other: RawLoad[] = [];
      for (let i = 0; i < rounds; i++) {
        own.push(await runLoad(url, scenario, seeded, { connections, duration: duration / rounds, cpu }));
        floorLoads.push(
          await runLoad(workers.urls.floor, floor.scenario, floor.seeded, { connections, duration: floorSlice, cpu }),
        );
        if (companionSeeded)
          other.push(await runLoad(url, companion!, companionSeeded, { connections, duration: duration / rounds, cpu }));
      }
      report.load = summarize(own);
      report.pairedFloor = summarize(floorLoads);
      report.floorName = floor.scenario.name;
      if (seeded.tagOf) {
        report.overhead = overhead(
          own.flatMap((l) => l.traced ?? ([] as Traced[])),
          await stand.takeLog(),
        );
        // One at a time: the same split without the 32 connections' queueing (each phase is then its own work). No
        // CPU figure: at a few requests per second, workerd's own idle work would weigh on each request.
        const alone = await runLoad(url, scenario, seeded, { connections: 1, duration: DEFAULTS.alone });
        report.overheadAlone = overhead(alone.traced ?? [], await stand.takeLog());
      }
      if (companionSeeded) report.companion = { name: companion!.name, load: summarize(other) };
    } else {
      report.load = summarize([await runLoad(url, scenario, seeded, { connections, duration, cpu })]);
    }
    if (scenario.noStandIns) report.standInCalls = (await stand.takeLog()).length;
    if (scenario.noUpstream) report.standInCalls = (await stand.takeLog()).filter((e) => e.call === "upstream").length;
    if (scenario.noFacilitator) report.standInCalls = (await stand.takeLog()).filter((e) => e.call !== "upstream").length;
    phase("load");
    if (scenario.target === "app") {
      report.accounting = await account(workers.urls[payments ? "payments-timing" : "app-timing"], scenario, seeded);
      addStatuses(report.accounting.statusCounts);
      phase("accounting");
    }
    if (scenario.explain) {
      try {
        report.queryPlans = await explain(workers.urls.d1, d1, (db) => scenario.explain!(db, seeded));
      } catch (err) {
        log(`  explain failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      phase("explain");
    }
    // Load statuses are in report.load; prime and accounting statuses count toward "unexpected" too.
    report.unexpected = unexpectedIn(report.load.statusCounts, expected) + unexpectedIn(statusCounts, expected);
    // The slices measured alongside (floor, companion) must be clean too: their figures are the comparisons' basis.
    const floorLoad = report.pairedFloor;
    const otherLoad = report.companion?.load;
    report.alongsideBad =
      (floorLoad ? floorLoad.errors + unexpectedIn(floorLoad.statusCounts, [200]) : 0) +
      (otherLoad ? otherLoad.errors + unexpectedIn(otherLoad.statusCounts, companion?.expect ?? [200]) : 0);
    statusCounts = {};
    log(
      `  ${report.load.rps} req/s, p50 ${report.load.p50} ms, p99 ${report.load.p99} ms, ${report.load.cpuMsPerReq ?? "?"} CPU ms/req` +
        (report.pairedFloor ? ` (floor meanwhile: ${report.pairedFloor.rps} req/s, p99 ${report.pairedFloor.p99} ms)` : "") +
        (report.companion
          ? ` ("${report.companion.name}" meanwhile: ${report.companion.load.rps} req/s, p50 ${report.companion.load.p50} ms)`
          : "") +
        (report.accounting ? `; ${report.accounting.statementsPerReq} st/req, ${report.accounting.doCallsPerReq} DO/req` : "") +
        ` [s: ${phases.join(", ")}]`,
    );
  }

  // The records of N paid requests reaching D1 (records.ts), on the app-count worker, after the load.
  let records: RecordsReport | undefined;
  if (recordsWanted()) {
    const n = positive("records", args.records, true) ?? 1000;
    if (BUDGET_MS - (Date.now() - started) < 40_000) log(`${RECORDS}: skipped (time budget)`);
    else {
      log(`${RECORDS}: ${n} paid requests, 32 at a time, on the counting worker`);
      const { seeded, paywallId } = await recordsSeed(ctx, workers.urls["payments-count"]);
      records = await measureRecords({
        countUrl: workers.urls["app-count"],
        paymentsUrl: workers.urls["payments-count"],
        d1,
        seeded,
        paywallId,
        requests: n,
        concurrency: 32,
        // The poll's wait (≤ 15 s, most often well under a second) and the teardown after the last request.
        sendUntil: started + BUDGET_MS - 25_000,
        log,
      });
    }
  }

  const ceiling = reports.find((r) => r.target === "ceiling")?.load;
  const floorAlone = reports.find((r) => r.target === "floor")?.load;
  for (const r of reports) {
    if (!r.load) continue;
    if (ceiling) r.ratioToCeiling = round(r.load.rps / ceiling.rps);
    const floor = r.pairedFloor ?? floorAlone;
    if (floor) {
      r.ratioToFloor = round(r.load.rps / floor.rps);
      r.p99ToFloor = round(r.load.p99 / floor.p99);
      if (r.load.cpuMsPerReq !== undefined && floor.cpuMsPerReq) r.cpuToFloor = round(r.load.cpuMsPerReq / floor.cpuMsPerReq);
    }
  }

  const bundleGzipKiB = app.wranglerGzipKiB ?? app.gzipKiB;
  const measured = reports.map((r) => ({
    name: r.name,
    target: r.target,
    read: r.read,
    skipped: r.skipped,
    rps: r.load?.rps ?? Number.NaN,
    p50: r.load?.p50 ?? Number.NaN,
    p99: r.load?.p99 ?? Number.NaN,
    errors: r.load?.errors ?? 0,
    non2xx: r.load?.non2xx ?? 0,
    unexpected: r.unexpected ?? 0,
    cpuMsPerReq: r.load?.cpuMsPerReq,
    alongsideBad: r.alongsideBad ?? 0,
    ...(r.companion
      ? {
          companion: {
            name: r.companion.name,
            rps: r.companion.load.rps,
            p50: r.companion.load.p50,
            p99: r.companion.load.p99,
            cpuMsPerReq: r.companion.load.cpuMsPerReq,
          },
        }
      : {}),
    ratioToFloor: r.ratioToFloor,
    p99ToFloor: r.p99ToFloor,
    floorName: r.floorName,
    floorP99: r.pairedFloor?.p99,
    overhead: r.overhead,
    statementsPerReq: r.accounting?.statementsPerReq,
    doCallsPerReq: r.accounting?.doCallsPerReq,
    standInCalls: r.standInCalls,
  }));
  const targets = TARGETS.map((t) => ({
    name: t.name,
    ...t.check({ scenarios: measured, bundleGzipKiB, bundleCeilingKiB: app.ceilingKiB, startup, records }),
  }));

  const report: BenchReport = {
    startedAt: new Date(started).toISOString(),
    elapsedS: round((Date.now() - started) / 1000),
    machine: { cpus: availableParallelism(), node: process.version },
    bundle: {
      bundler: app.bundler,
      bytes: app.bytes,
      gzipKiB: app.gzipKiB,
      wranglerGzipKiB: app.wranglerGzipKiB,
      ceilingKiB: app.ceilingKiB,
      buildMs: app.ms,
    },
    startup,
    records,
    scenarios: reports,
    targets,
  };
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (args.out) await writeFile(args.out, json);
  process.stdout.write(args.json ? json : `\n${renderTable(report)}\n`);
  return args.strict && targets.some((t) => t.status === "FAIL") ? 1 : 0;
}

const round = (n: number) => Math.round(n * 100) / 100;

main()
  .then(async (code) => {
    await cleanup();
    clearTimeout(watchdog);
    process.exit(code);
  })
  .catch(async (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanup();
    process.exit(1);
  });
