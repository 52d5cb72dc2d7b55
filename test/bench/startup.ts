// The Worker's startup in workerd, on fresh isolates of the production bundle: what its global scope costs, what the
// first request after it costs, and whether a request to the API evaluates the payment SDKs.
//
// - Startup CPU: workerd compiles a Worker's modules and evaluates its global scope when it loads it, before serving.
//   Each round starts two workerd processes one after the other (Miniflare, on a machine otherwise idle): one with a
//   copy of the bundle per first request below, one with as many copies of a trivial Worker with the same bindings.
//   The CPU time each process has used once it is ready (the sum of its threads' /proc/<pid>/task/<tid>/schedstat)
//   differs by what the bundle costs to compile and evaluate; divided by the number of copies, that is one isolate's
//   startup, the quantity Cloudflare limits (parse and execute the global scope: STARTUP_LIMIT_MS). CPU time, not wall
//   time, so a shared machine's other load moves it less; the median of STARTUP_ROUNDS rounds is reported.
// - First requests: each copy of the bundle then takes its first request (its global scope already evaluated):
//   one per app: the management API (`GET /v1/me` with a key, `GET /v1/health`), the dashboard (a signed-in page, a
//   seeded session) and the payment gateway (an x402 402 challenge, an MPP 402 challenge, on the payment origin);
//   workerd's CPU time around it, and the same request once warm (median of WARM_REPEATS).
// - Payment SDKs: the modules every isolate evaluates at startup are those the entry reaches through static imports
//   (esbuild's metafile of the build). Those a request evaluates later come from V8's precise coverage: one more copy
//   runs behind a wrapper that starts it (node:inspector inside the isolate) before importing the bundle, and each
//   function that ran is mapped through the bundle's source map to its source. A module reached through `import()` is
//   evaluated by a wrapper function esbuild gives it, which maps to the module: it shows when it runs.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { SourceMap } from "node:module";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare, type V4WorkerOptions } from "miniflare";
import { SESSION_COOKIE, SESSION_MAX_MS } from "../../src/dashboard/session.ts";
import { getDb } from "../../src/db/client.ts";
import { insertSession } from "../../src/db/dashboard.ts";
import { randomHex, sha256Hex } from "../../src/lib/ids.ts";
import { cpuNsOf, findWorkerd } from "./cpu.ts";
import { seedTenant } from "./seed.ts";
import { STARTUP_BUDGET_MS, STARTUP_LIMIT_MS, STARTUP_LIMIT_SOURCE } from "./targets.ts";
import { applyMigrations, BENCH_ENCRYPTION_KEY, COMPAT, freePort, paymentOriginOf } from "./workers.ts";

const STARTUP_ROUNDS = 3;
const WARM_REPEATS = 5;
/** The payment SDKs and the MCP SDK, and what only they pull in (their own node_modules). */
const PAYMENT_SDK = /(?:^|\/)node_modules\/(@x402\/[^/]+|mppx|@modelcontextprotocol\/sdk|@cfworker\/json-schema)\//;

export interface FirstRequest {
  name: string;
  /** The app that answers it. */
  app: "api" | "dashboard" | "gateway";
  status: number;
  /** workerd CPU ms of the isolate's first request, after its startup. */
  firstMs: number;
  /** workerd CPU ms of the same request warm (median). */
  warmMs: number;
}

export interface Evaluated {
  /** What ran (requests, in order). */
  requests: string[];
  /** Payment SDK packages with a function that ran (`mppx/node_modules/ox` is mppx's own copy of ox). */
  paymentSdks: string[];
}

/** esbuild's metafile (wrangler's `--metafile`): each input's imports, and the output's entry point. */
export interface Metafile {
  inputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
  outputs: Record<string, { entryPoint?: string }>;
}

export interface StartupReport {
  limitMs: number;
  limitSource: string;
  budgetMs: number;
  /** One isolate's startup (compile and evaluate the global scope), workerd CPU ms, per round; and their median. */
  roundsMs: number[];
  startupMs: number;
  isolatesPerRound: number;
  firstRequests: FirstRequest[];
  /**
   * Payment SDK packages the bundle's entry reaches through static imports: evaluated at every isolate's startup
   * (undefined: no metafile given).
   */
  atStartup?: string[];
  /** Payment SDK packages whose functions ran in these requests (undefined: the bundle has no source map next to it). */
  api?: Evaluated;
  x402?: Evaluated;
  mpp?: Evaluated;
  ms: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const round2 = (n: number) => Math.round(n * 100) / 100;

const TRIVIAL = `import { DurableObject } from "cloudflare:workers";
export class RateLimiter extends DurableObject {}
export class PaymentCoordinator extends DurableObject {}
export class FacilitatorHealthObject extends DurableObject {}
export default { fetch() { return new Response("trivial"); } };`;

/** Stands in for the network: nothing these requests do should leave the machine, and nothing may hang on it. */
const NO_NETWORK = `export default { fetch() { return new Response("no network in the startup probe", { status: 503 }); } };`;

/**
 * Imports the bundle on the first request, after starting V8's precise coverage in the isolate; `/__coverage` takes
 * the counts since the last take (and resets them). Its Durable Object binding is served by the `host` copy.
 */
const COVERAGE_WRAPPER = `import inspector from "node:inspector/promises";
let app, session;
export default {
  async fetch(request, env, ctx) {
    if (!session) {
      session = new inspector.Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
    }
    if (new URL(request.url).pathname === "/__coverage") {
      const { result } = await session.post("Profiler.takePreciseCoverage");
      return Response.json(result.filter((s) => s.url.endsWith("/worker.js")));
    }
    app ??= (await import("./worker.js")).default;
    return app.fetch(request, env, ctx);
  },
};`;

interface Probe {
  name: string;
  app: FirstRequest["app"];
  path: string;
  headers: Record<string, string>;
  /** The status it must answer. */
  status: number;
}

export async function measureStartup(options: {
  root: string;
  scriptPath: string;
  vars: Record<string, string>;
  /** A directory for the probes' D1 and Durable Object storage (shared by the probes, one after the other). */
  storageDir: string;
  /** The build's esbuild metafile, for the modules evaluated at startup. */
  metafile?: Metafile;
  log?: (msg: string) => void;
}): Promise<StartupReport> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const code = await readFile(options.scriptPath, "utf8");
  const mapPath = `${options.scriptPath}.map`;
  const map = existsSync(mapPath) ? JSON.parse(await readFile(mapPath, "utf8")) : undefined;
  const bindings = { ...options.vars, ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY };
  // Each copy answers the API at 127.0.0.1 and the payment origin at localhost, on a port of its own.
  const worker = async (name: string, modules: { path: string; contents: string }[], extra: Partial<V4WorkerOptions> = {}) => {
    const port = await freePort();
    return {
      name,
      modulesRoot: "/",
      modules: modules.map((m) => ({ type: "ESModule" as const, ...m })),
      ...COMPAT,
      bindings: { ...bindings, PAYMENT_BASE_URL: paymentOriginOf(`http://127.0.0.1:${port}`) },
      d1Databases: { DB: "startup-db" },
      durableObjects: {
        RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
        PAYMENT_COORDINATOR: { className: "PaymentCoordinator", useSQLite: true },
        FACILITATOR_HEALTH: { className: "FacilitatorHealthObject", useSQLite: true },
      },
      outboundService: "no-network",
      unsafeDirectSockets: [{ host: "127.0.0.1", port }],
      ...extra,
    } as V4WorkerOptions;
  };
  /** A gateway path goes to the payment origin of the copy at `origin`, anything else to its API origin. */
  const urlOf = (origin: string, path: string) => (path.startsWith("/api/") ? paymentOriginOf(origin) : origin) + path;
  const start = async (workers: V4WorkerOptions[]) => {
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        host: "127.0.0.1",
        port: 0,
        resourcePersistencePath: options.storageDir,
        workers: [...workers, { name: "no-network", modules: true, script: NO_NETWORK, ...COMPAT }],
        handleStructuredLogs: () => {},
      }),
    );
    await mf.ready;
    return mf;
  };
  const bundle = [{ path: "/worker.js", contents: code }];

  // The paywall the challenges are for (through the API), and which payment SDK modules requests evaluate.
  log("startup: seeding a paywall through the API, behind V8 coverage");
  let probes: Probe[] | undefined;
  const evaluated: Pick<StartupReport, "api" | "x402" | "mpp"> = {};
  {
    const mf = await start([
      await worker("host", bundle),
      await worker("coverage", [{ path: "/wrapper.js", contents: COVERAGE_WRAPPER }, ...bundle], {
        compatibilityFlags: [...COMPAT.compatibilityFlags, "enable_nodejs_inspector_module", "enable_nodejs_inspector_local_dev"],
        durableObjects: {
          RATE_LIMITER: { className: "RateLimiter", scriptName: "host", useSQLite: true },
          PAYMENT_COORDINATOR: { className: "PaymentCoordinator", scriptName: "host", useSQLite: true },
        },
      }),
    ]);
    try {
      const d1 = (await mf.getD1Database("DB", "host")) as unknown as D1Database;
      await applyMigrations(d1, options.root);
      const { keys, tenant } = await seedTenant(getDb(d1), 1);
      // A dashboard session, as sign-in starts one (the cookie's random id; its SHA-256 stored).
      const sessionId = randomHex(32);
      const now = new Date();
      await insertSession(getDb(d1), {
        id: await sha256Hex(sessionId),
        tenantId: tenant.id,
        signupWallet: null,
        now,
        expiresAt: new Date(now.getTime() + SESSION_MAX_MS),
        ip: null,
        userAgent: null,
        signedInWith: "link",
      });
      const url = (await mf.unsafeGetDirectURL("coverage")).origin;
      const sent: string[] = [];
      const call = async (method: string, path: string, body?: unknown) => {
        sent.push(`${method} ${path.replace(/\/pay\/.*$/, "/pay/…")}`);
        const res = await fetch(urlOf(url, path), {
          method,
          headers: { authorization: `Bearer ${keys[0]}`, ...(body ? { "content-type": "application/json" } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, json: () => JSON.parse(text) as { data: Record<string, unknown> } };
      };
      const created = (r: { status: number; json: () => { data: Record<string, unknown> } }, what: string) => {
        if (r.status !== 201) throw new Error(`startup probe: creating ${what} answered ${r.status}`);
        return r.json().data;
      };
      const service = created(
        await call("POST", "/v1/services", {
          name: "Startup probe",
          baseUrl: "https://upstream.gateway.test",
          authMethod: "none",
          authConfig: {},
          networks: ["base-sepolia", "tempo-testnet"],
          mode: "testnet",
        }),
        "a service",
      );
      const paywall = created(
        await call("POST", "/v1/paywalls", {
          slug: "startup",
          name: "Startup probe",
          targetType: "ROUTE",
          targetRoute: "/echo",
          serviceId: service.id,
          price: "10000",
          currency: "USDC",
          networks: ["base-sepolia", "tempo-testnet"],
          fulfillmentMode: "PROXY",
        }),
        "a paywall",
      );
      const urls = paywall.paymentUrls as { x402: string; mpp: string };
      probes = [
        { name: "GET /v1/health", app: "api", path: "/v1/health", headers: {}, status: 200 },
        { name: "GET /v1/me", app: "api", path: "/v1/me", headers: { authorization: `Bearer ${keys[0]}` }, status: 200 },
        {
          name: "GET /dashboard/keys (signed in)",
          app: "dashboard",
          path: "/dashboard/keys",
          headers: { cookie: `${SESSION_COOKIE}=${sessionId}` },
          status: 200,
        },
        {
          name: "GET /api/x402/pay/… (402 challenge)",
          app: "gateway",
          path: new URL(urls.x402).pathname,
          headers: {},
          status: 402,
        },
        {
          name: "GET /api/mpp/pay/… (402 challenge)",
          app: "gateway",
          path: new URL(urls.mpp).pathname,
          headers: {},
          status: 402,
        },
      ];
      const [x402, mpp] = probes.slice(-2) as [Probe, Probe];
      await call("GET", "/v1/paywalls?limit=10");
      await call("GET", "/v1/health");
      if (map) {
        const take = async (): Promise<Evaluated> => {
          const [script] = (await (await fetch(`${url}/__coverage`)).json()) as Coverage[];
          const done = { requests: [...sent], paymentSdks: script ? paymentSdksRun(script, code, map) : [] };
          sent.length = 0;
          return done;
        };
        evaluated.api = await take();
        if ((await call("GET", x402.path)).status !== 402) throw new Error("startup probe: the x402 URL did not answer 402");
        evaluated.x402 = await take();
        if ((await call("GET", mpp.path)).status !== 402) throw new Error("startup probe: the MPP URL did not answer 402");
        evaluated.mpp = await take();
      }
    } finally {
      await mf.dispose();
    }
  }

  // Rounds: the process with the bundle's copies, then the one with the trivial copies.
  if (!probes) throw new Error("startup probe: no paywall");
  const requests = probes;
  const copies = requests.length;
  const roundsMs: number[] = [];
  const first = new Map<string, { app: FirstRequest["app"]; status: number; first: number[]; warm: number[] }>();
  for (let round = 0; round < STARTUP_ROUNDS; round++) {
    const ready: number[] = [];
    for (const kind of ["bundle", "trivial"] as const) {
      const names = requests.map((_, i) => `${kind}-${i}`);
      const mf = await start(
        await Promise.all(
          names.map((name) => worker(name, kind === "bundle" ? bundle : [{ path: "/worker.js", contents: TRIVIAL }])),
        ),
      );
      try {
        const cpu = cpuNsOf(findWorkerd());
        const at = cpu();
        if (at === undefined) throw new Error("startup probe: no CPU time for workerd (needs Linux /proc)");
        ready.push(at);
        if (kind === "trivial") continue;
        for (const [i, probe] of requests.entries()) {
          const url = urlOf((await mf.unsafeGetDirectURL(names[i])).origin, probe.path);
          const timed = async () => {
            const before = cpu() as number;
            const res = await fetch(url, { headers: probe.headers });
            await res.arrayBuffer();
            return { status: res.status, ms: ((cpu() as number) - before) / 1e6 };
          };
          const entry = first.get(probe.name) ?? { app: probe.app, status: 0, first: [], warm: [] };
          const once = await timed();
          if (once.status !== probe.status)
            throw new Error(`startup probe: the first ${probe.name} answered ${once.status}, not ${probe.status}`);
          entry.status = once.status;
          entry.first.push(once.ms);
          const warm: number[] = [];
          for (let k = 0; k < WARM_REPEATS; k++) warm.push((await timed()).ms);
          entry.warm.push(median(warm));
          first.set(probe.name, entry);
        }
      } finally {
        await mf.dispose();
      }
    }
    roundsMs.push(round2(((ready[0] as number) - (ready[1] as number)) / 1e6 / copies));
    log(`startup: round ${round + 1}: ${roundsMs.at(-1)} ms per isolate`);
  }
  return {
    limitMs: STARTUP_LIMIT_MS,
    limitSource: STARTUP_LIMIT_SOURCE,
    budgetMs: STARTUP_BUDGET_MS,
    roundsMs,
    startupMs: round2(median(roundsMs)),
    isolatesPerRound: copies,
    firstRequests: [...first].map(([name, e]) => ({
      name,
      app: e.app,
      status: e.status,
      firstMs: round2(median(e.first)),
      warmMs: round2(median(e.warm)),
    })),
    ...(options.metafile ? { atStartup: paymentSdksAtStartup(options.metafile) } : {}),
    ...evaluated,
    ms: Math.round(performance.now() - started),
  };
}

/**
 * The payment SDK packages among the modules the entry point reaches through static imports (`import` statements,
 * `require` calls; not `import()`), i.e. those every isolate evaluates at startup.
 */
export function paymentSdksAtStartup(metafile: Metafile): string[] {
  const entries = Object.values(metafile.outputs).flatMap((o) => (o.entryPoint ? [o.entryPoint] : []));
  const seen = new Set<string>(entries);
  const queue = [...entries];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    for (const i of metafile.inputs[file]?.imports ?? []) {
      if (i.external || i.kind === "dynamic-import" || seen.has(i.path)) continue;
      seen.add(i.path);
      queue.push(i.path);
    }
  }
  return [...new Set([...seen].flatMap((file) => (PAYMENT_SDK.test(file) ? [packagePath(file)] : [])))].sort();
}

/** `…/node_modules/mppx/node_modules/ox/x.js` → `mppx/node_modules/ox`. */
function packagePath(file: string): string {
  const names = file.replaceAll("\\", "/").match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g) ?? [];
  const from = names.findIndex((n) => PAYMENT_SDK.test(`/${n}/`));
  return names
    .slice(from)
    .map((n) => n.slice("node_modules/".length))
    .join("/node_modules/");
}

interface Coverage {
  functions: { functionName: string; ranges: { startOffset: number; endOffset: number; count: number }[] }[];
}

/**
 * The payment SDK packages with a function that ran: each function's start (a UTF-16 offset into the bundle) through
 * the source map to its source. The script's own top level (the whole bundle) is not a module's.
 */
function paymentSdksRun(script: Coverage, code: string, map: { sources: string[] }): string[] {
  const lineStarts = [0];
  for (let i = 0; i < code.length; i++) if (code.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const position = (offset: number): [number, number] => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return [lo, offset - (lineStarts[lo] as number)];
  };
  const sourceMap = new SourceMap(map as never);
  const found = new Set<string>();
  for (const fn of script.functions) {
    const range = fn.ranges[0];
    if (!range || range.count === 0 || (range.startOffset === 0 && range.endOffset >= code.length - 1)) continue;
    const entry = sourceMap.findEntry(...position(range.startOffset)) as { originalSource?: string };
    const source = entry.originalSource?.replaceAll("\\", "/");
    if (source && PAYMENT_SDK.test(source)) found.add(packagePath(source));
  }
  return [...found].sort();
}

// `node test/bench/startup.ts <bundle.js> [<metafile.json>]`: the same figures for any built bundle (e.g. to compare two builds).
if (import.meta.main) {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { readVars } = await import("./workers.ts");
  const root = join(import.meta.dirname, "../..");
  const [scriptPath, metafilePath] = process.argv.slice(2);
  if (!scriptPath) throw new Error("usage: node test/bench/startup.ts <bundle.js> [<esbuild metafile.json>]");
  const storageDir = await mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), `startup-${randomUUID()}-`));
  try {
    const report = await measureStartup({
      root,
      scriptPath,
      vars: await readVars(root),
      storageDir,
      metafile: metafilePath ? (JSON.parse(await readFile(metafilePath, "utf8")) as Metafile) : undefined,
      log: (m) => process.stderr.write(`${m}\n`),
    });
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await rm(storageDir, { recursive: true, force: true });
  }
}
