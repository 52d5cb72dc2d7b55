// One Miniflare (one workerd process) hosting every worker of the run, each on its own direct socket on 127.0.0.1:
// the app twice (accounting off for throughput, on for the statement counts), the ceiling and the storage floor.
// All share the compatibility settings and one D1 database, so the figures are comparable. Each app answers both
// origins on its port, as under `npm run dev`: the API at `127.0.0.1`, the payment origin at `localhost`.
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { convertV4MiniflareOptions, Miniflare, type V4WorkerOptions } from "miniflare";
import { STAND_IN_HOSTS } from "./stand-ins.ts";

export const BENCH_ENCRYPTION_KEY = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/** The receiver authorizer of the bench's sessions (`SESSION_AUTHORIZER_KEY`): a fixed key, for a local run only. */
export const BENCH_SESSION_AUTHORIZER_KEY = `0x${"5e".repeat(32)}`;
/**
 * The benchmark's data volumes (100 services × 10 paywalls for one tenant, 100,000 paywalls for another) exceed the default
 * caps; the cap checks still run on every write.
 */
export const BENCH_CAPS = { MAX_SERVICES_PER_TENANT: "1000", MAX_PAYWALLS_PER_TENANT: "1000000" };
export const COMPAT = { compatibilityDate: "2026-11-01", compatibilityFlags: ["nodejs_compat"] };
const D1_ID = "bench-db";
/**
 * The payment-records queue's consumer as wrangler.toml configures it (the objects' records reach D1 through it). Each
 * app whose objects record payments has a queue of its own (a queue has one consumer), named as the Worker's
 * dispatch expects (`payment-records…`).
 */
const RECORDS_CONSUMER = { maxBatchSize: 100, maxBatchTimeout: 2, maxRetries: 10 };
export const recordsQueue = (queueName: string) => ({
  queueProducers: { PAYMENT_RECORDS_QUEUE: { queueName } },
  queueConsumers: { [queueName]: RECORDS_CONSUMER },
});

export type WorkerName =
  | "app"
  | "app-timing"
  | "payments"
  | "payments-timing"
  | "ceiling"
  | "floor"
  | "d1"
  | "peer"
  | "app-count"
  | "payments-count";

/** The ports `freePort` has handed out in this process: none is handed out twice. */
const handedOut = new Set<number>();

/**
 * A port of 127.0.0.1 free now (an app's socket needs its port known before start: it is in `PAYMENT_BASE_URL`),
 * never one this process was given before: the startup probe starts several copies at once, and the system may give a
 * port just closed again.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

export interface Workers {
  mf: Miniflare;
  urls: Record<WorkerName, string>;
}

/** The payment origin of an app answering on `origin` (`http://127.0.0.1:<port>`): the same port, as `localhost`. */
export const paymentOriginOf = (origin: string) => origin.replace("//127.0.0.1:", "//localhost:");

/** The `[vars]` of wrangler.toml (flat `KEY = "value"` lines), so the app runs with its real configuration. */
export async function readVars(root: string): Promise<Record<string, string>> {
  const toml = await readFile(join(root, "wrangler.toml"), "utf8");
  const vars: Record<string, string> = {};
  let inVars = false;
  for (const line of toml.split("\n")) {
    if (/^\s*\[/.test(line)) inVars = /^\s*\[vars\]\s*$/.test(line);
    const m = inVars ? /^\s*([A-Za-z0-9_]+)\s*=\s*"([^"]*)"\s*$/.exec(line) : null;
    if (m) vars[m[1]!] = m[2]!;
  }
  return vars;
}

export async function startWorkers(options: {
  /** Where workerd keeps D1 and Durable Object storage for the run (a tmpfs if available). */
  storageDir: string;
  appScript: string;
  ceilingScript: string;
  floorScript: string;
  d1Script: string;
  outboundScript: string;
  /** The peer row's worker (fixtures/x402-peer.ts): the x402 SDK's own resource server. */
  peerScript: string;
  /** The bundle with its D1 statements counted wherever issued (fixtures/d1-count.ts), for the records measurement. */
  countScript: string;
  vars: Record<string, string>;
  /** `127.0.0.1:<port>` of the stand-in facilitator and upstream (stand-ins.ts). */
  standIns: string;
}): Promise<Workers> {
  const socket = { unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] };
  const ports = { app: await freePort(), "app-timing": await freePort(), "app-count": await freePort() };
  const appSocket = (name: keyof typeof ports) => ({
    unsafeDirectSockets: [{ host: "127.0.0.1", port: ports[name] }],
  });
  const paymentOrigin = (name: keyof typeof ports) => paymentOriginOf(`http://127.0.0.1:${ports[name]}`);
  const appBindings = {
    ...options.vars,
    ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
    // Throughput runs must never meet the limits: a 429 would count as a non-2xx. GET /v1/health sends each
    // connection's requests from an address of its own (scenarios.ts `ownAddress`), but one such client still sends
    // thousands a minute: the per-address limit (120 by default) is raised as the per-key one is.
    RATE_LIMIT_MAX: "100000000",
    IP_RATE_LIMIT_MAX: "100000000",
    ...BENCH_CAPS,
    // The gateway's facilitator for testnet paywalls: the stand-in, by a name the SSRF rules accept.
    FACILITATOR_URL_TESTNET: `https://${STAND_IN_HOSTS.facilitator}`,
    // Sessions are offered only with the platform's receiver authorizer (docs/sessions.md): a fixed bench key.
    SESSION_AUTHORIZER_KEY: BENCH_SESSION_AUTHORIZER_KEY,
  };
  // The app's outbound fetch (facilitator, upstream) goes to the stand-in server whatever the URL, through the
  // `outbound` worker (fixtures/outbound.ts): Miniflare takes only a worker or a Node function as an outbound service,
  // and a Node function would add a hop through this (loaded) process.
  const outboundService = "outbound";
  const workers: V4WorkerOptions[] = [
    {
      name: "app",
      modules: true,
      scriptPath: options.appScript,
      modulesRoot: dirname(options.appScript),
      ...COMPAT,
      d1Databases: { DB: D1_ID },
      durableObjects: {
        RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
        PAYMENT_COORDINATOR: { className: "PaymentCoordinator", useSQLite: true },
        FACILITATOR_HEALTH: { className: "FacilitatorHealthObject", useSQLite: true },
        CHANNELS: { className: "ChannelObject", useSQLite: true },
      },
      bindings: { ...appBindings, SERVER_TIMING: "off", PAYMENT_BASE_URL: paymentOrigin("app") },
      ...recordsQueue("payment-records"),
      outboundService,
      ...appSocket("app"),
    },
    {
      // Same bundle, accounting on; it shares the app's D1 and its rate limiter objects, so it sees the same state.
      name: "app-timing",
      modules: true,
      scriptPath: options.appScript,
      modulesRoot: dirname(options.appScript),
      ...COMPAT,
      d1Databases: { DB: D1_ID },
      durableObjects: {
        RATE_LIMITER: { className: "RateLimiter", scriptName: "app", useSQLite: true },
        PAYMENT_COORDINATOR: { className: "PaymentCoordinator", scriptName: "app", useSQLite: true },
        FACILITATOR_HEALTH: { className: "FacilitatorHealthObject", scriptName: "app", useSQLite: true },
        CHANNELS: { className: "ChannelObject", scriptName: "app", useSQLite: true },
      },
      bindings: { ...appBindings, SERVER_TIMING: "on", PAYMENT_BASE_URL: paymentOrigin("app-timing") },
      outboundService,
      ...appSocket("app-timing"),
    },
    {
      name: "ceiling",
      modules: true,
      scriptPath: options.ceilingScript,
      modulesRoot: dirname(options.ceilingScript),
      ...COMPAT,
      ...socket,
    },
    {
      name: "floor",
      modules: true,
      scriptPath: options.floorScript,
      modulesRoot: dirname(options.floorScript),
      ...COMPAT,
      d1Databases: { DB: D1_ID },
      durableObjects: { RATE_LIMITER: { className: "RateLimiter", useSQLite: true } },
      ...socket,
    },
    {
      name: "outbound",
      modules: true,
      scriptPath: options.outboundScript,
      modulesRoot: dirname(options.outboundScript),
      ...COMPAT,
      serviceBindings: { STAND_IN: { external: { address: options.standIns, http: {} } } },
    },
    {
      // The same bundle behind fixtures/d1-count.ts, with Durable Objects of its own (so that their statements are
      // counted too), on the shared D1. Takes no load but the records measurement's (records.ts).
      name: "app-count",
      // The wrapper first (the entry), then the bundle it imports.
      modules: [
        { type: "ESModule", path: options.countScript },
        { type: "ESModule", path: options.appScript },
      ],
      modulesRoot: dirname(options.countScript),
      ...COMPAT,
      d1Databases: { DB: D1_ID },
      durableObjects: {
        RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
        PAYMENT_COORDINATOR: { className: "PaymentCoordinator", useSQLite: true },
        FACILITATOR_HEALTH: { className: "FacilitatorHealthObject", useSQLite: true },
        CHANNELS: { className: "ChannelObject", useSQLite: true },
      },
      bindings: { ...appBindings, SERVER_TIMING: "off", PAYMENT_BASE_URL: paymentOrigin("app-count") },
      ...recordsQueue("payment-records-count"),
      outboundService,
      ...appSocket("app-count"),
    },
    {
      name: "peer",
      modules: true,
      scriptPath: options.peerScript,
      modulesRoot: dirname(options.peerScript),
      ...COMPAT,
      outboundService,
      ...socket,
    },
    {
      // Executes the runner's seeding statements (seed.ts remoteD1). Takes no load.
      name: "d1",
      modules: true,
      scriptPath: options.d1Script,
      modulesRoot: dirname(options.d1Script),
      ...COMPAT,
      d1Databases: { DB: D1_ID },
      ...socket,
    },
  ];
  // Miniflare 5 takes a new options shape; the v4 shape (what wrangler's docs show) converts to it.
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      ...(process.env.BENCH_INSPECTOR ? { inspectorPort: Number(process.env.BENCH_INSPECTOR) } : {}),
      resourcePersistencePath: options.storageDir,
      workers,
      // The app writes one access-log line per request: drop them rather than print thousands of lines.
      handleStructuredLogs: () => {},
    }),
  );
  await mf.ready;
  const url = async (name: WorkerName) => (await mf.unsafeGetDirectURL(name)).origin;
  return {
    mf,
    urls: {
      app: await url("app"),
      "app-timing": await url("app-timing"),
      payments: paymentOrigin("app"),
      "payments-timing": paymentOrigin("app-timing"),
      ceiling: await url("ceiling"),
      floor: await url("floor"),
      d1: await url("d1"),
      peer: await url("peer"),
      "app-count": await url("app-count"),
      "payments-count": paymentOrigin("app-count"),
    },
  };
}

/** Applies ./migrations/*.sql in order (drizzle-kit's `--> statement-breakpoint` separates statements). */
export async function applyMigrations(d1: D1Database, root: string): Promise<number> {
  const dir = join(root, "migrations");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  for (const file of files) {
    const sql = await readFile(join(dir, file), "utf8");
    const statements = sql
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter(Boolean);
    await d1.batch(statements.map((s) => d1.prepare(s)));
  }
  return files.length;
}
