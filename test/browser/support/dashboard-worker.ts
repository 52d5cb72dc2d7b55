// The production bundle of the Worker in workerd through Miniflare on a real socket, for the dashboard's browser
// tests: D1 with every migration applied, the rate limiter Durable Object, the `[vars]` of wrangler.toml (plus
// overrides), and the seeded demo tenant with a full-scope key. Unlike ./worker.ts it serves no static assets
// (the dashboard serves its own), so it runs without a public/ folder.
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare, type V4WorkerOptions } from "miniflare";
import { seedDemo } from "../../../src/admin/commands.ts";
import { getDb } from "../../../src/db/client.ts";
import { applyMigrations, BENCH_ENCRYPTION_KEY, readVars } from "../../bench/workers.ts";
import { buildBundle, OUTPUT_DIR, ROOT } from "./worker.ts";

export interface DashboardWorker {
  url: string;
  tenantId: string;
  db(): Promise<D1Database>;
  logs: string[];
  stop(): Promise<void>;
}

export async function startDashboardWorker(options: { port: number; vars?: Record<string, string> }): Promise<DashboardWorker> {
  const scriptPath = await buildBundle();
  const storage = join(OUTPUT_DIR, "storage", String(options.port));
  await rm(storage, { recursive: true, force: true });
  await mkdir(storage, { recursive: true });
  const logs: string[] = [];
  const app: V4WorkerOptions = {
    name: "app",
    modules: true,
    scriptPath,
    compatibilityDate: "2026-11-01",
    compatibilityFlags: ["nodejs_compat"],
    d1Databases: { DB: "app-db" },
    durableObjects: { RATE_LIMITER: { className: "RateLimiter", useSQLite: true } },
    bindings: { ...(await readVars(ROOT)), ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY, ...options.vars },
  };
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: options.port,
      resourcePersistencePath: storage,
      workers: [app],
      handleStructuredLogs: ({ message }: { message: string }) => {
        logs.push(message);
      },
    }),
  );
  const url = (await mf.ready).origin;
  const db = async () => (await mf.getD1Database("DB", "app")) as unknown as D1Database;
  await applyMigrations(await db(), ROOT);
  const seeded = await seedDemo(getDb(await db()));
  if (!seeded) throw new Error("the fresh database already had a tenant");
  return { url, tenantId: seeded.tenant.id, db, logs, stop: () => mf.dispose() };
}
