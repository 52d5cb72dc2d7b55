/**
 * What the Node-side scripts (`npm run admin`, `npm run dev`) share: the project paths, wrangler as a child
 * process, and the D1 binding through wrangler's `getPlatformProxy()`.
 */
import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { type KeyCache, keyObjectName } from "../core/keys/key-object.ts";
import { RECORD_MAX_AGE_MS } from "../core/keys/record.ts";

export const PROJECT_ROOT = resolve(import.meta.dirname, "../..");
export const WRANGLER_CONFIG = join(PROJECT_ROOT, "wrangler.toml");
/** wrangler's own launcher; run with `wranglerEnv()` so its `#!/usr/bin/env node` finds the Node running us (24). */
export const WRANGLER_BIN = join(PROJECT_ROOT, "node_modules", ".bin", "wrangler");
/** Where `wrangler dev` and `wrangler d1 … --local` keep local state (wrangler's default for this project). */
export const LOCAL_PERSIST_PATH = join(PROJECT_ROOT, ".wrangler", "state", "v3");
export const DB_BINDING = "DB";
/** Where local dev's traces go when they are on (Miniflare's trace collector, `X_LOCAL_OBSERVABILITY`). */
export const LOCAL_TRACE_STORE = join(LOCAL_PERSIST_PATH, "observability");

/** The environment for a wrangler child: our Node first on PATH, no telemetry; `ci` makes every prompt take its default. */
export function wranglerEnv(options: { ci?: boolean } = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
    WRANGLER_SEND_METRICS: "false",
    ...(options.ci ? { CI: "true" } : {}),
  };
}

/** Runs wrangler to completion; resolves with its exit code. */
export function runWrangler(args: string[], options: { stdio: StdioOptions; ci?: boolean }): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(WRANGLER_BIN, args, { cwd: PROJECT_ROOT, env: wranglerEnv({ ci: options.ci }), stdio: options.stdio });
    child.on("error", fail);
    child.on("exit", (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

/**
 * `wrangler d1 migrations apply DB --local`, non-interactive: stdin closed and `CI=true`, so wrangler does not
 * prompt and takes the default answer (apply). Its output goes to `output` (our stderr by default), never our stdout.
 */
export async function applyLocalMigrations(output: StdioOptions = ["ignore", 2, 2]): Promise<void> {
  const code = await runWrangler(["d1", "migrations", "apply", DB_BINDING, "--local"], { stdio: output, ci: true });
  if (code !== 0) throw new Error(`Applying the local D1 migrations failed (wrangler exited with ${code}); see its output above`);
}

/**
 * The same, quietly: wrangler's output (its tables of migrations) is kept back and written to stderr only when it
 * fails. Resolves with how many migrations it applied (the rows its table marks ✅).
 */
export async function applyLocalMigrationsQuietly(): Promise<number> {
  const chunks: Buffer[] = [];
  const code = await new Promise<number>((done, fail) => {
    const args = ["d1", "migrations", "apply", DB_BINDING, "--local"];
    const child = spawn(WRANGLER_BIN, args, {
      cwd: PROJECT_ROOT,
      env: wranglerEnv({ ci: true }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", fail);
    child.on("close", (exit, signal) => done(exit ?? (signal ? 1 : 0)));
  });
  if (code !== 0) {
    process.stderr.write(Buffer.concat(chunks));
    throw new Error(`Applying the local D1 migrations failed (wrangler exited with ${code}); see its output above`);
  }
  // wrangler redraws its table after each migration: the last one holds the outcome.
  const text = Buffer.concat(chunks).toString("utf8");
  return text.includes("┌") ? (text.slice(text.lastIndexOf("┌")).match(/\.sql\s*│\s*✅/g)?.length ?? 0) : 0;
}

interface D1Config {
  binding: string;
  database_name?: string;
  database_id?: string;
  migrations_dir?: string;
  migrations_table?: string;
}

export interface D1Handle {
  db: D1Database;
  /** Which database: `local (.wrangler/state)` or `remote <name> (<id>)`. */
  target: string;
  /** How a key change reaches the Worker's key objects (`devServerKeyCache`, `REMOTE_KEY_CACHE`). */
  keyCache: KeyCache;
  dispose(): Promise<void>;
}

/** The key objects' binding in the CLI's proxy config: the Worker's class, served by the Worker's dev session. */
const KEY_OBJECTS = "RATE_LIMITER";

/** miniflare's dev-registry proxy answers this (503) when no dev session of the Worker is registered. */
const NO_DEV_SESSION = /Worker "[^"]*" not found/;

/**
 * The local key cache: each key's Durable Object in the `wrangler dev` (`npm run dev`) serving this project, reached
 * through wrangler's dev registry (the proxy's Durable Object binding names the Worker as its `script_name`).
 *
 * The objects hold records in memory only (core/rate-limit/durable-object.ts). With a dev session registered, every
 * object of a changed key is told (`POST /forget` to the object), and a failure fails the command. Without one, no
 * object is alive to hold a record: whatever starts later reads D1, which already holds the change. So a change made
 * locally holds from the next request on, whether or not the dev server runs.
 */
function devServerKeyCache(namespace: DurableObjectNamespace): KeyCache {
  return {
    async forget(keyHashes) {
      for (const hash of keyHashes) {
        const stub = namespace.get(namespace.idFromName(keyObjectName(hash)));
        const res = await stub.fetch("http://key-object/forget", { method: "POST" });
        const text = await res.text();
        if (res.status === 200) continue;
        if (res.status === 503 && NO_DEV_SESSION.test(text)) return;
        throw new Error(
          `The key was changed in D1, but the running dev server did not confirm it (${res.status} ${text.slice(0, 200)}); ` +
            `restart it (npm run dev) to be sure it reads the change`,
        );
      }
    },
  };
}

/**
 * With `--remote`: Durable Objects cannot be reached from outside Cloudflare's network (wrangler's remote bindings do
 * not include them), so the change is in D1 only. Each key's object reads its record again at most
 * `RECORD_MAX_AGE_MS` after it last read it: the change holds for every request from then on.
 */
export const REMOTE_KEY_CACHE: KeyCache = { forget: async () => {} };

export const REMOTE_KEY_NOTE =
  `--remote: the change is in the deployed D1 database now; requests see it within ${RECORD_MAX_AGE_MS / 1000} s ` +
  `(each key's Durable Object reads its record again after that long). The dashboard applies a change from the next request on.`;

async function readProjectConfig() {
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig({ config: WRANGLER_CONFIG });
  const d1 = (config.d1_databases as D1Config[]).find((d) => d.binding === DB_BINDING);
  if (!d1) throw new Error(`${WRANGLER_CONFIG} has no D1 binding named ${DB_BINDING}`);
  return { config, d1 };
}

/**
 * The `DB` binding through `getPlatformProxy()`.
 *
 * The proxy is started from a minimal wrangler config (written to a temporary directory) that holds only the D1
 * binding and, locally, the key objects' Durable Object binding served by the Worker's dev session
 * (`devServerKeyCache`); the Worker's other bindings (`.dev.vars` secrets) are not needed and would only print
 * warnings. The proxy's own Worker takes another name than the project's, so it never stands for it in the registry.
 *
 * - Local: persisted in `.wrangler/state/v3` of this project, the same SQLite file `wrangler dev` serves, so a running
 *   `npm run dev` sees a change on its next query.
 * - Remote: the binding is marked `remote: true` and `remoteBindings` is on, so wrangler opens a remote proxy session
 *   to the deployed database named in wrangler.toml. That needs Cloudflare credentials (`wrangler login`, or
 *   `CLOUDFLARE_API_TOKEN` and `CLOUDFLARE_ACCOUNT_ID` when not interactive) and a real `database_id`.
 */
export async function openD1(options: { remote: boolean }): Promise<D1Handle> {
  const { getPlatformProxy } = await import("wrangler");
  const { config, d1 } = await readProjectConfig();
  const dir = mkdtempSync(join(tmpdir(), "paywall-admin-"));
  const configPath = join(dir, "wrangler.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      name: `${config.name}-admin-cli`,
      compatibility_date: config.compatibility_date,
      compatibility_flags: config.compatibility_flags,
      ...(config.account_id ? { account_id: config.account_id } : {}),
      d1_databases: [
        {
          binding: d1.binding,
          database_name: d1.database_name,
          database_id: d1.database_id,
          ...(options.remote ? { remote: true } : {}),
        },
      ],
      ...(options.remote
        ? {}
        : { durable_objects: { bindings: [{ name: KEY_OBJECTS, class_name: "RateLimiter", script_name: config.name }] } }),
    }),
  );
  try {
    const proxy = await getPlatformProxy<{ DB: D1Database; [KEY_OBJECTS]?: DurableObjectNamespace }>({
      configPath,
      envFiles: [],
      remoteBindings: options.remote,
      persist: options.remote ? false : { path: LOCAL_PERSIST_PATH },
    });
    return {
      db: proxy.env.DB,
      keyCache: proxy.env[KEY_OBJECTS] ? devServerKeyCache(proxy.env[KEY_OBJECTS]) : REMOTE_KEY_CACHE,
      target: options.remote
        ? `remote D1 database ${d1.database_name} (${d1.database_id})`
        : `local D1 database in ${LOCAL_PERSIST_PATH}`,
      async dispose() {
        try {
          await proxy.dispose();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Names of the migration files wrangler has not applied to `db` yet (all of them on a fresh database). */
export async function pendingMigrations(db: D1Database): Promise<string[]> {
  const { d1 } = await readProjectConfig();
  const dir = resolve(PROJECT_ROOT, d1.migrations_dir ?? "migrations");
  const table = d1.migrations_table ?? "d1_migrations";
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  let applied = new Set<string>();
  try {
    const { results } = await db.prepare(`SELECT name FROM "${table.replaceAll('"', '""')}"`).all<{ name: string }>();
    applied = new Set(results.map((r) => r.name));
  } catch {
    // No migrations table yet: a fresh database, every migration is pending.
  }
  return files.filter((f) => !applied.has(f));
}

/** Our parent when we started (npm's shell under `npm run`): a different parent later means it went away. */
const FIRST_PARENT = process.ppid;

const isClosedPipe = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code === "EPIPE";

/**
 * Keeps stdout for the one JSON answer: from here on, anything else that writes to stdout (wrangler's logger, for
 * one: "Establishing remote connection…") lands on stderr. Returns the writer for the real stdout.
 *
 * A reader that went away (`| head`, `| true`) is not an error: what it did not read is dropped, quietly.
 */
export function reserveStdout(): (text: string) => Promise<void> {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout);
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  stdout.on("error", (err) => {
    if (!isClosedPipe(err)) throw err;
  });
  return (text) => new Promise((done, fail) => write(text, (err) => (err && !isClosedPipe(err) ? fail(err) : done())));
}

/**
 * Stops `child` (and so its own children: wrangler stops workerd) when we are told to stop — SIGINT, SIGTERM,
 * SIGHUP — and when our parent goes away. `npm run` passes its signals to the `sh -c` it runs us under, and that
 * shell exits without passing them on: our parent changing is then the only sign that we were asked to stop.
 */
export function stopWithUs(child: ChildProcess): void {
  const stop = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => stop(signal));
  const watch = setInterval(() => {
    if (process.ppid !== FIRST_PARENT) {
      clearInterval(watch);
      stop("SIGTERM");
    }
  }, 250);
  child.on("exit", () => clearInterval(watch));
}
