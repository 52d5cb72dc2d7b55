// Starts the production bundle of the Worker in workerd through Miniflare (as test/bench/workers.ts does), with the
// static assets of ./src/public, the real `[vars]` of wrangler.toml, D1 with every migration applied, the Durable
// Objects, the payment-records queue (the payment objects' records reach D1 through it), and a seeded tenant with a
// full-scope API key. For tests that need real sockets or a real browser.
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { convertV4MiniflareOptions, Miniflare, type V4WorkerOptions } from "miniflare";
import { seedDemo } from "../../../src/admin/commands.ts";
import { buildWorker } from "../../../src/cli/build.ts";
import { outboundService } from "../../../src/cli/localnet/outbound.ts";
import { getDb } from "../../../src/db/client.ts";
import { applyMigrations, BENCH_ENCRYPTION_KEY, readVars, recordsQueue } from "../../bench/workers.ts";

export const ROOT = resolve(import.meta.dirname, "../../..");
/** Everything tests write (bundles, screenshots, workerd storage): git-ignored. */
export const OUTPUT_DIR = join(ROOT, "test-output");

export interface LogLine {
  level: string;
  message: string;
}

export interface RunningWorker {
  /** `http://localhost:<port>`: the API origin (the API, the dashboard and the static API reference). */
  url: string;
  /** `http://127.0.0.1:<port>`: the payment origin (`PAYMENT_BASE_URL`), the same Worker under its other host name. */
  paymentUrl: string;
  /** A raw API key with every scope, of the seeded tenant. */
  key: string;
  tenantId: string;
  /** Every console line the Worker wrote, with its level (`log`, `error`, …). */
  logs: LogLine[];
  /** The access-log lines (JSON) among `logs`. */
  accessLog(): Record<string, unknown>[];
  /** The running runtime (a new one after `restart`). */
  mf: Miniflare;
  /** The Worker's D1 database, for tests that set up or read rows directly. */
  db(): Promise<D1Database>;
  /**
   * The payment origin of a variant (`StartOptions.variants`: the same bundle and storage, other vars),
   * `http://127.0.0.1:<port + 1 + its index>`.
   */
  urlOf(variant: string): Promise<string>;
  /** Runs the Worker's `scheduled` handler for `cron` as of `scheduledTime` (ms since the epoch). */
  scheduled(cron: string, scheduledTime: number): Promise<void>;
  stop(): Promise<void>;
  /**
   * A crash and a restart: the runtime is disposed at once (whatever it was doing is cut off, as when the Worker's
   * process is killed) and started again on the same persisted D1 and Durable Object storage, with the same options.
   */
  restart(): Promise<void>;
}

let built: Promise<string> | undefined;

/** Builds the production bundle once per test process (src/cli/build.ts, as `npm run deploy` does). */
export function buildBundle(): Promise<string> {
  // One bundle per test process: files run side by side, and two builds must not write one directory.
  built ??= buildWorker(join(OUTPUT_DIR, "worker", String(process.pid))).then((b) => b.scriptPath);
  return built;
}

export interface StartOptions {
  /** The port to listen on (127.0.0.1); each test file uses its own from its helper's range. */
  port: number;
  /** Extra or overriding vars, e.g. `{ CORS_ALLOWED_ORIGINS: "https://app.example.com" }`. */
  vars?: Record<string, string>;
  /** Where the Worker's outbound `fetch` goes (Miniflare's `outboundService`), e.g. the local payment stack's router. */
  outboundService?: (request: Request) => Promise<Response>;
  /**
   * More copies of the Worker, each with these vars over the others', sharing its D1 database and rate limiter (e.g.
   * a facilitator behind a fault): each answers on its own port (`urlOf`).
   */
  variants?: Record<string, Record<string, string>>;
}

export async function startWorker(options: StartOptions): Promise<RunningWorker> {
  const scriptPath = await buildBundle();
  const storage = join(OUTPUT_DIR, "storage", String(options.port));
  await rm(storage, { recursive: true, force: true });
  await mkdir(storage, { recursive: true });
  const logs: LogLine[] = [];
  // Two origins on one port, as under `npm run dev`: the API and dashboard on `localhost`, payments on `127.0.0.1`.
  const url = `http://localhost:${options.port}`;
  const paymentUrl = `http://127.0.0.1:${options.port}`;
  const app: V4WorkerOptions = {
    name: "app",
    modules: true,
    scriptPath,
    compatibilityDate: "2026-11-01",
    compatibilityFlags: ["nodejs_compat"],
    d1Databases: { DB: "app-db" },
    durableObjects: {
      RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
      PAYMENT_COORDINATOR: { className: "PaymentCoordinator", useSQLite: true },
      FACILITATOR_HEALTH: { className: "FacilitatorHealthObject", useSQLite: true },
    },
    bindings: {
      ...(await readVars(ROOT)),
      ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
      PAYMENT_BASE_URL: paymentUrl,
      ...options.vars,
    },
    assets: {
      directory: join(ROOT, "src", "public"),
      binding: "ASSETS",
      routerConfig: { has_user_worker: true },
      run_worker_first: true,
    },
    // The payment records reach D1 through their queue, as wrangler.toml configures it (docs/gateway.md).
    ...recordsQueue("payment-records"),
    // As a Node handler, so a connection that fails is a failed fetch in the Worker (src/cli/localnet/outbound.ts).
    ...(options.outboundService ? { outboundService: outboundService(options.outboundService) as never } : {}),
  };
  // Each variant answers on the next port, as the payment origin of its own (`PAYMENT_BASE_URL`).
  const variantOrigin = (i: number) => `http://127.0.0.1:${options.port + 1 + i}`;
  const variants = Object.entries(options.variants ?? {}).map(
    ([name, vars], i): V4WorkerOptions => ({
      name: `variant-${name}`,
      modules: true,
      scriptPath,
      compatibilityDate: app.compatibilityDate,
      compatibilityFlags: app.compatibilityFlags,
      d1Databases: app.d1Databases,
      durableObjects: {
        RATE_LIMITER: { className: "RateLimiter", scriptName: "app", useSQLite: true },
        PAYMENT_COORDINATOR: { className: "PaymentCoordinator", scriptName: "app", useSQLite: true },
        FACILITATOR_HEALTH: { className: "FacilitatorHealthObject", scriptName: "app", useSQLite: true },
      },
      bindings: { ...app.bindings, PAYMENT_BASE_URL: variantOrigin(i), ...vars },
      queueProducers: app.queueProducers,
      ...(app.outboundService ? { outboundService: app.outboundService } : {}),
      unsafeDirectSockets: [{ host: "127.0.0.1", port: options.port + 1 + i }],
    }),
  );
  const runtime = async () => {
    const started = new Miniflare(
      convertV4MiniflareOptions({
        host: "127.0.0.1",
        port: options.port,
        resourcePersistencePath: storage,
        workers: [app, ...variants],
        handleStructuredLogs: ({ level, message }: { level: string; message: string }) => {
          logs.push({ level, message });
        },
      }),
    );
    await started.ready;
    return { mf: started, d1: (await started.getD1Database("DB", "app")) as unknown as D1Database };
  };
  let { mf, d1 } = await runtime();
  await applyMigrations(d1, ROOT);
  const seeded = await seedDemo(getDb(d1));
  if (!seeded) throw new Error("the fresh database already had a tenant");
  const running: RunningWorker = {
    url,
    paymentUrl,
    key: seeded.key.key,
    tenantId: seeded.tenant.id,
    logs,
    accessLog: () =>
      logs.flatMap(({ message }) => {
        try {
          const parsed = JSON.parse(message);
          return parsed && typeof parsed === "object" && "requestId" in parsed ? [parsed as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      }),
    mf,
    db: async () => d1,
    urlOf: async (variant) => (await mf.unsafeGetDirectURL(`variant-${variant}`)).origin,
    scheduled: async (cron, scheduledTime) => {
      await (await mf.getWorker("app")).scheduled({ cron, scheduledTime: new Date(scheduledTime) });
    },
    stop: () => mf.dispose(),
    restart: async () => {
      await mf.dispose();
      ({ mf, d1 } = await runtime());
      running.mf = mf;
    },
  };
  return running;
}
