/**
 * `npm run dev`: everything a fresh clone needs, then `wrangler dev`.
 *
 * 1. `.dev.vars` gets a generated `ENCRYPTION_KEY` (`k1:<base64 of 32 random bytes>`) and `SESSION_AUTHORIZER_KEY` (a
 *    random private key: the receiver authorizer of x402 sessions) if it has none.
 * 2. Pending local D1 migrations are applied, quietly (`--verbose` shows wrangler's tables of them).
 * 3. On a database without tenants: a demo tenant and a key with every scope. The key (shown once), a ready `curl`,
 *    a one-time dashboard sign-in link and how to make another key are printed last, framed, once wrangler is ready
 *    (see readyBlock). Otherwise the block says how to make a key with the operator CLI.
 * 4. Local traces are off (see localTracesOff): they would keep credentials sent in URLs.
 * 5. `wrangler dev` on port 8787 (extra arguments are passed on: `npm run dev -- --port 9000`), with inherited stdio;
 *    SIGINT/SIGTERM/SIGHUP, and the end of our parent (npm's shell), stop it (see stopWithUs); its exit code is ours.
 *    wrangler.toml's Cron Triggers run on their schedule meanwhile (./dev-crons.ts): the payment sweep, the cleanup.
 * With `--payments`: the local payment loop instead (chain, token, facilitator, demo upstream and paywall, then
 * `npm run buy`; see src/cli/localnet/dev-loop.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { generatePrivateKey } from "viem/accounts";
import { DEMO_TENANT, listAllTenants, seedDemo } from "../admin/commands.ts";
import { SCOPES } from "../core/keys/scopes.ts";
import { generateKeyRingSecret } from "../core/secrets/secret-box.ts";
import { createSignInLink } from "../core/sign-in-links.ts";
import { getDb } from "../db/client.ts";
import { missingSecretLines } from "../lib/dev-vars.ts";
import { runCronsOnSchedule, scheduledOverHttp, wranglerCrons } from "./dev-crons.ts";
import {
  applyLocalMigrations,
  applyLocalMigrationsQuietly,
  LOCAL_TRACE_STORE,
  openD1,
  PROJECT_ROOT,
  stopWithUs,
  WRANGLER_BIN,
  wranglerEnv,
} from "./platform.ts";

const DEFAULT_PORT = "8787";
const DEV_VARS = join(PROJECT_ROOT, ".dev.vars");

const say = (text: string) => process.stdout.write(`${text}\n`);

/** The local secrets `npm run dev` generates when `.dev.vars` has none: the key ring, the sessions' receiver authorizer. */
const DEV_SECRETS = { ENCRYPTION_KEY: generateKeyRingSecret, SESSION_AUTHORIZER_KEY: generatePrivateKey };

/** Creates `.dev.vars` (mode 600) with fresh local secrets, or adds those missing to an existing file. */
function ensureDevVars(): void {
  if (!existsSync(DEV_VARS)) {
    const lines = missingSecretLines("", DEV_SECRETS);
    writeFileSync(DEV_VARS, `# Local secrets for \`wrangler dev\` (never committed).\n${lines.join("\n")}\n`, { mode: 0o600 });
    say(`Created .dev.vars with a generated ${Object.keys(DEV_SECRETS).join(" and ")}.`);
    return;
  }
  const text = readFileSync(DEV_VARS, "utf8");
  const lines = missingSecretLines(text, DEV_SECRETS);
  if (lines.length === 0) return;
  appendFileSync(DEV_VARS, `${text === "" || text.endsWith("\n") ? "" : "\n"}${lines.join("\n")}\n`);
  say(`Added a generated ${lines.map((l) => l.slice(0, l.indexOf("="))).join(" and ")} to .dev.vars.`);
}

/** The port `wrangler dev` will listen on: ours unless the caller passed `--port`. */
function portOf(args: string[]): { port: string; args: string[] } {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--port" && args[i + 1]) return { port: args[i + 1]!, args };
    if (arg.startsWith("--port=")) return { port: arg.slice("--port=".length), args };
  }
  return { port: DEFAULT_PORT, args: ["--port", DEFAULT_PORT, ...args] };
}

/** The first line and the frame of the block `npm run dev` ends its start with. */
export const READY_BLOCK_TITLE = "YOUR LOCAL API IS READY";
const FRAME = "=".repeat(100);

/** The operator CLI's command for a new key with every scope (it prints the key once). */
const keyCommand = (tenant: string) =>
  `npm run -s admin -- key create --tenant ${tenant} --name "local dev" --scopes ${SCOPES.join(",")}`;

/**
 * The block printed last, once the server is ready: on a fresh database the demo key (shown only here), a `curl`
 * with it, the dashboard and a one-time sign-in link, and how to make another key; on a database with tenants the
 * dashboard link and how to make a key. Framed so it stands out at the bottom of wrangler's output.
 */
async function readyBlock(port: string): Promise<string[]> {
  const handle = await openD1({ remote: false });
  try {
    const db = getDb(handle.db);
    const seeded = await seedDemo(db);
    const base = `http://localhost:${port}`;
    const lines = ["", FRAME, READY_BLOCK_TITLE, ""];
    const tenants = seeded ? [] : await listAllTenants(db);
    const tenant = seeded?.tenant.id ?? (tenants.find((t) => t.email === DEMO_TENANT.email) ?? tenants[0])?.id;
    if (seeded) {
      lines.push(
        `Demo tenant ${seeded.tenant.id} (${seeded.tenant.email}). Its API key, with every scope, shown only now:`,
        "",
        `  ${seeded.key.key}`,
        "",
        "Try it:",
        `  curl -H "Authorization: Bearer ${seeded.key.key}" ${base}/v1/me`,
      );
    } else {
      lines.push(`The local database already has ${tenants.length} tenant(s), so no demo key was made.`);
    }
    if (tenant) {
      const link = await createSignInLink(db, { tenant, baseUrl: base });
      lines.push(
        "",
        `Dashboard: ${base}/dashboard  (sign-up open locally). One-time sign-in link, valid until ${link.expiresAt}:`,
        `  ${link.url}`,
      );
    }
    lines.push(
      "",
      `API reference: ${base}/docs`,
      seeded ? "Lost the key? It cannot be shown again; make another (printed once) with:" : "Make a key (printed once) with:",
      `  ${keyCommand(tenant ?? "<tenant id>")}`,
      "or on the dashboard's Keys page.",
      FRAME,
      "",
    );
    return lines;
  } finally {
    await handle.dispose();
  }
}

/**
 * Passes wrangler's output on and calls `ready` once: after wrangler said it is ready ("Ready on") and then stayed
 * quiet for `QUIET_MS` (the warnings it prints right after), or at most `MAX_WAIT_MS` after it, so what `ready` prints
 * comes last.
 */
const QUIET_MS = 1500;
const MAX_WAIT_MS = 5000;
function whenReady(child: ChildProcess, ready: () => void): void {
  let state: "starting" | "ready" | "done" = "starting";
  let timer: NodeJS.Timeout | undefined;
  const done = () => {
    if (state !== "ready") return;
    state = "done";
    clearTimeout(timer);
    ready();
  };
  const pass = (to: NodeJS.WriteStream) => (chunk: Buffer) => {
    to.write(chunk);
    if (state === "starting" && /Ready on /.test(chunk.toString("utf8"))) {
      state = "ready";
      setTimeout(done, MAX_WAIT_MS); // requests arriving at once do not hold it back for long
    }
    if (state !== "ready") return;
    clearTimeout(timer);
    timer = setTimeout(done, QUIET_MS);
  };
  child.stdout?.on("data", pass(process.stdout));
  child.stderr?.on("data", pass(process.stderr));
}

/**
 * Local traces off (wrangler's and Miniflare's `X_LOCAL_OBSERVABILITY`, on by default): their store
 * (`.wrangler/state/v3/observability`) keeps every request's and subrequest's URL verbatim, query string included
 * (`redact_query_string` is not applied locally), so a probe's API key or a `query-param` credential would sit there
 * in plain text. A store left by an earlier run goes too. `X_LOCAL_OBSERVABILITY=true npm run dev` turns them on.
 */
function localTracesOff(): void {
  process.env.X_LOCAL_OBSERVABILITY ??= "false";
  if (process.env.X_LOCAL_OBSERVABILITY === "false") rmSync(LOCAL_TRACE_STORE, { recursive: true, force: true });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const verbose = argv.includes("--verbose");
  const { port, args } = portOf(argv.filter((a) => a !== "--payments" && a !== "--verbose"));
  localTracesOff();
  ensureDevVars();
  if (verbose) await applyLocalMigrations("inherit");
  else {
    const applied = await applyLocalMigrationsQuietly();
    say(`Local D1 database: ${applied === 0 ? "up to date" : `${applied} migration(s) applied`} (--verbose shows them).`);
  }
  const block = await readyBlock(port);
  if (argv.includes("--payments")) {
    const { runDevPaymentLoop } = await import("./localnet/dev-loop.ts");
    return runDevPaymentLoop(Number(port), block);
  }

  // Two origins on one port: the API and dashboard on `localhost`, the payment URLs on `127.0.0.1`.
  // WEBHOOKS_ALLOW_LOOPBACK: webhook endpoints on this machine (`npm run webhooks:listen`), for this run only;
  // UPSTREAMS_ALLOW_LOOPBACK: services whose upstream is a server on this machine (docs/development.md).
  const vars = [
    "--var",
    "DASHBOARD_SIGNUP:open",
    "--var",
    `PAYMENT_BASE_URL:http://127.0.0.1:${port}`,
    "--var",
    "WEBHOOKS_ALLOW_LOOPBACK:on",
    "--var",
    "UPSTREAMS_ALLOW_LOOPBACK:on",
    // Sessions settle every 10 s here (an hour deployed), and a channel unused for 2 minutes is refunded.
    "--var",
    "SESSION_SETTLE_INTERVAL_SECONDS:10",
    "--var",
    "SESSION_IDLE_REFUND_SECONDS:120",
  ];
  // wrangler's output passes through us, so the ready block can follow it (colours kept on a terminal).
  const child = spawn(WRANGLER_BIN, ["dev", ...vars, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...wranglerEnv(), ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}) },
    stdio: ["inherit", "pipe", "pipe"],
  });
  let shown = false;
  const showBlock = () => {
    if (shown) return;
    shown = true;
    say(block.join("\n"));
  };
  whenReady(child, showBlock);
  stopWithUs(child);
  runCronsOnSchedule(await wranglerCrons(), (cron, at) => scheduledOverHttp(port, cron, at));
  child.on("error", (err) => {
    process.stderr.write(`Could not start wrangler dev: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    // Never ready (wrangler failed): the block still comes, since a new demo key is shown nowhere else.
    if (code !== 0 && !signal) showBlock();
    process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
  });
}

try {
  await main();
} catch (err) {
  process.stderr.write(`npm run dev: ${(err as Error).message}\n`);
  process.exit(1);
}
