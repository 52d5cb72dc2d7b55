/**
 * `npm run dev`: everything a fresh clone needs, then `wrangler dev`.
 *
 * 1. `.dev.vars` gets a generated `ENCRYPTION_KEY` (`k1:<base64 of 32 random bytes>`) if it has none.
 * 2. Pending local D1 migrations are applied.
 * 3. On a database without tenants: a demo tenant and a key with every scope, printed once with a ready `curl`.
 *    Otherwise: how to make a key with the operator CLI.
 * 4. Local traces are off (see localTracesOff): they would keep credentials sent in URLs.
 * 5. `wrangler dev` on port 8787 (extra arguments are passed on: `npm run dev -- --port 9000`), with inherited stdio;
 *    SIGINT/SIGTERM/SIGHUP, and the end of our parent (npm's shell), stop it (see stopWithUs); its exit code is ours.
 *    wrangler.toml's Cron Triggers run on their schedule meanwhile (./dev-crons.ts): the payment sweep, the cleanup.
 * With `--payments`: the local payment loop instead (chain, token, facilitator, demo upstream and paywall, then
 * `npm run buy`; see test/localnet/dev-loop.ts).
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { DEMO_TENANT, listAllTenants, seedDemo } from "../admin/commands.ts";
import { generateKeyRingSecret } from "../core/secrets/secret-box.ts";
import { createSignInLink } from "../dashboard/sign-in-links.ts";
import { getDb } from "../db/client.ts";
import { runCronsOnSchedule, scheduledOverHttp, wranglerCrons } from "./dev-crons.ts";
import {
  applyLocalMigrations,
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

/** Creates `.dev.vars` (mode 600) with a fresh key ring, or adds one to an existing file that has none. */
function ensureDevVars(): void {
  const line = `ENCRYPTION_KEY=${generateKeyRingSecret()}\n`;
  if (!existsSync(DEV_VARS)) {
    writeFileSync(DEV_VARS, `# Local secrets for \`wrangler dev\` (never committed).\n${line}`, { mode: 0o600 });
    say("Created .dev.vars with a generated ENCRYPTION_KEY.");
    return;
  }
  const text = readFileSync(DEV_VARS, "utf8");
  if (/^\s*ENCRYPTION_KEY\s*=/m.test(text)) return;
  appendFileSync(DEV_VARS, `${text === "" || text.endsWith("\n") ? "" : "\n"}${line}`);
  say("Added a generated ENCRYPTION_KEY to .dev.vars.");
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

/** A fresh one-time dashboard sign-in link (10 minutes) for the tenant. */
async function sayDashboardLink(db: ReturnType<typeof getDb>, base: string, tenant: string): Promise<void> {
  const link = await createSignInLink(db, { tenant, baseUrl: base });
  say(`Dashboard: ${base}/dashboard (sign-up open locally). One-time sign-in link for ${tenant}, valid until ${link.expiresAt}:`);
  say(`  ${link.url}`);
  say("");
}

async function seed(port: string): Promise<void> {
  const handle = await openD1({ remote: false });
  try {
    const db = getDb(handle.db);
    const seeded = await seedDemo(db);
    const base = `http://localhost:${port}`;
    if (seeded) {
      say("");
      say(`Seeded an empty database: demo tenant ${seeded.tenant.id} (${seeded.tenant.email})`);
      say(`and an API key with every scope. It is shown only now and cannot be recovered:`);
      say("");
      say(`  ${seeded.key.key}`);
      say("");
      say("Try it once the server is up:");
      say(`  curl -H "Authorization: Bearer ${seeded.key.key}" ${base}/v1/me`);
      say("");
      await sayDashboardLink(db, base, seeded.tenant.id);
      return;
    }
    const tenants = await listAllTenants(db);
    say("");
    say(`The local database already has ${tenants.length} tenant(s), so no demo key was made.`);
    for (const t of tenants.slice(0, 5)) say(`  ${t.id}  ${t.email}`);
    if (tenants.length > 5) say("  … (npm run -s admin -- tenant list shows them all)");
    say("Make a key with the operator CLI (it prints the key once):");
    say(
      `  npm run -s admin -- key create --tenant ${tenants[0]?.id ?? "<tenant id>"} --name "local dev" --scopes services:write,paywalls:write,transactions:read,events:read`,
    );
    say(`then: curl -H "Authorization: Bearer <key>" ${base}/v1/me`);
    say("");
    const demo = tenants.find((t) => t.email === DEMO_TENANT.email) ?? tenants[0];
    if (demo) await sayDashboardLink(db, base, demo.id);
  } finally {
    await handle.dispose();
  }
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
  const { port, args } = portOf(argv.filter((a) => a !== "--payments"));
  localTracesOff();
  ensureDevVars();
  await applyLocalMigrations("inherit");
  await seed(port);
  if (argv.includes("--payments")) {
    const { runDevPaymentLoop } = await import("../../test/localnet/dev-loop.ts");
    return runDevPaymentLoop(Number(port));
  }

  // Two origins on one port: the API and dashboard on `localhost`, the payment URLs on `127.0.0.1`.
  // WEBHOOKS_ALLOW_LOOPBACK: webhook endpoints on this machine (`npm run webhooks:listen`), for this run only.
  const vars = [
    "--var",
    "DASHBOARD_SIGNUP:open",
    "--var",
    `PAYMENT_BASE_URL:http://127.0.0.1:${port}`,
    "--var",
    "WEBHOOKS_ALLOW_LOOPBACK:on",
  ];
  const child = spawn(WRANGLER_BIN, ["dev", ...vars, ...args], {
    cwd: PROJECT_ROOT,
    env: wranglerEnv(),
    stdio: "inherit",
  });
  stopWithUs(child);
  runCronsOnSchedule(await wranglerCrons(), (cron, at) => scheduledOverHttp(port, cron, at));
  child.on("error", (err) => {
    process.stderr.write(`Could not start wrangler dev: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
  });
}

try {
  await main();
} catch (err) {
  process.stderr.write(`npm run dev: ${(err as Error).message}\n`);
  process.exit(1);
}
