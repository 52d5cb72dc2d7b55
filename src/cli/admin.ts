/**
 * The operator CLI: `npm run -s admin -- <command>` (docs/operations.md; `-s` keeps npm's banner off stdout).
 *
 * Prints one JSON value on stdout and nothing else; on failure prints `{"error", "code"[, "details"]}` on stderr
 * and exits non-zero (2 for a usage error, 1 otherwise). Works on the local D1 that `npm run dev` serves (pending
 * local migrations are applied first), or with `--remote` on the deployed database.
 */
import { parseArgs } from "node:util";
import { DrizzleQueryError } from "drizzle-orm/errors";
import {
  createKey,
  createTenant,
  demoData,
  facilitatorsReport,
  listAllTenants,
  listKeys,
  pauseKey,
  removeKey,
  resumeKey,
  revokeKey,
} from "../admin/commands.ts";
import { ApiError } from "../core/http/errors.ts";
import type { KeyStore } from "../core/keys/key-object.ts";
import { SCOPES } from "../core/keys/scopes.ts";
import { createSignInLink } from "../core/sign-in-links.ts";
import { type Db, getDb } from "../db/client.ts";
import { formatIssues, type Issue } from "../lib/issues.ts";
import { applyLocalMigrations, type D1Handle, openD1, pendingMigrations, REMOTE_KEY_NOTE, reserveStdout } from "./platform.ts";

const USAGE = `Usage: npm run -s admin -- [--remote] <command>

Commands:
  tenant create --email E --name N --wallet 0x… [--tempo-wallet 0x…]
  tenant list
  key create --tenant ID --name N --scopes s1,s2 [--expires-at ISO] [--allow-ip ip-or-cidr,…]
  key list --tenant ID
  key pause ID
  key resume ID
  key revoke ID
  key delete ID
  demo-data --tenant ID [--count N]      demo service, paywalls and N (default 200) buyer requests of history
  dashboard-link --tenant ID [--base-url URL]
                                         a one-time dashboard sign-in link (10 minutes) → {"url", "expiresAt"};
                                         URL is where the dashboard is served (default http://localhost:8787)
  facilitators [--base-url URL]          each facilitator's health (status, recent calls and failures, median
                                         latency, last failure) as the Worker at URL reports it in GET /v1/health
                                         (default http://localhost:8787; a deployed Worker: its API origin)

Options:
  --remote     Work on the deployed D1 database instead of the local one (needs Cloudflare credentials:
               \`wrangler login\`, or CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID; run remote migrations
               with \`wrangler d1 migrations apply DB --remote\` when deploying). A key change made this way
               reaches requests within 60 s (locally, and from the dashboard: from the next request on).
  -h, --help   Show this help.

Scopes: ${SCOPES.join(", ")}
Keys: at most 20 active (not revoked, not expired; paused keys count) per tenant. The raw key is printed once,
by \`key create\`, and cannot be recovered.

Output: JSON on stdout (with -s, npm adds nothing to it). Errors: {"error": "...", "code": "..."} on stderr,
non-zero exit. Allowlist entries: 203.0.113.7, 203.0.113.0/24, 2001:db8::/32 (canonical forms only).
`;

type Values = {
  email?: string;
  name?: string;
  wallet?: string;
  "tempo-wallet"?: string;
  tenant?: string;
  scopes?: string[];
  "expires-at"?: string;
  "allow-ip"?: string[];
  count?: string;
  "base-url"?: string;
};

interface Command {
  options: (keyof Values)[];
  required: (keyof Values)[];
  /** Name of the one positional argument, if the command takes one. */
  arg?: "ID";
  run(db: Db, values: Values, arg: string, keys: KeyStore): Promise<unknown>;
  /** It changes a key: its Durable Object must hear of it (with `--remote` it cannot: REMOTE_KEY_NOTE). */
  changesKey?: true;
  /** It asks the running Worker, not D1 (no database is opened). */
  worker?: (values: Values) => Promise<unknown>;
}

const COMMANDS: Record<string, Command> = {
  "tenant create": {
    options: ["email", "name", "wallet", "tempo-wallet"],
    required: ["email", "name", "wallet"],
    run: (db, v) => createTenant(db, { email: v.email!, name: v.name!, wallet: v.wallet!, tempoWallet: v["tempo-wallet"] }),
  },
  "tenant list": { options: [], required: [], run: (db) => listAllTenants(db) },
  "key create": {
    options: ["tenant", "name", "scopes", "expires-at", "allow-ip"],
    required: ["tenant", "name", "scopes"],
    run: (db, v) =>
      createKey(db, {
        tenant: v.tenant!,
        name: v.name!,
        scopes: v.scopes!,
        expiresAt: v["expires-at"],
        allowIps: v["allow-ip"],
      }),
  },
  "key list": { options: ["tenant"], required: ["tenant"], run: (db, v) => listKeys(db, { tenant: v.tenant! }) },
  "key pause": { options: [], required: [], arg: "ID", changesKey: true, run: (_db, _v, id, keys) => pauseKey(keys, { id }) },
  "key resume": { options: [], required: [], arg: "ID", changesKey: true, run: (_db, _v, id, keys) => resumeKey(keys, { id }) },
  "key revoke": { options: [], required: [], arg: "ID", changesKey: true, run: (_db, _v, id, keys) => revokeKey(keys, { id }) },
  "key delete": { options: [], required: [], arg: "ID", changesKey: true, run: (_db, _v, id, keys) => removeKey(keys, { id }) },
  "demo-data": {
    options: ["tenant", "count"],
    required: ["tenant"],
    run: (db, v) => demoData(db, { tenant: v.tenant!, count: v.count }),
  },
  "dashboard-link": {
    options: ["tenant", "base-url"],
    required: ["tenant"],
    run: (db, v) => createSignInLink(db, { tenant: v.tenant!, baseUrl: v["base-url"] ?? "http://localhost:8787" }),
  },
  facilitators: {
    options: ["base-url"],
    required: [],
    run: async () => undefined,
    worker: (v) => facilitatorsReport((input) => fetch(input), v["base-url"] ?? "http://localhost:8787"),
  },
};

/** Input field names as the command line spells them, for error messages. */
const FLAG_NAMES: Record<string, string> = {
  email: "--email",
  name: "--name",
  wallet: "--wallet",
  tempoWallet: "--tempo-wallet",
  tenant: "--tenant",
  scopes: "--scopes",
  expiresAt: "--expires-at",
  allowIps: "--allow-ip",
  count: "--count",
  baseUrl: "--base-url",
  id: "ID",
};

class UsageError extends ApiError {
  constructor(message: string) {
    super("VALIDATION_ERROR", `${message}. Run with --help for usage.`);
  }
}

interface Invocation {
  help: boolean;
  remote: boolean;
  command?: Command;
  values: Values;
  arg: string;
}

const parseOptions = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      email: { type: "string" },
      name: { type: "string" },
      wallet: { type: "string" },
      "tempo-wallet": { type: "string" },
      tenant: { type: "string" },
      scopes: { type: "string", multiple: true },
      "expires-at": { type: "string" },
      "allow-ip": { type: "string", multiple: true },
      count: { type: "string" },
      "base-url": { type: "string" },
      remote: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });

function parseCommandLine(argv: string[]): Invocation {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\.$/, ""));
  }
  const { help, remote, ...values } = parsed.values;
  const positionals = parsed.positionals;
  if (help || positionals[0] === "help") return { help: true, remote, values, arg: "" };
  if (positionals.length === 0) throw new UsageError("No command given");

  const words = COMMANDS[positionals[0]!] ? 1 : 2; // `demo-data`, `dashboard-link`, `facilitators`: one word; the others two
  const name = positionals.slice(0, words).join(" ");
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`Unknown command "${name}"`);
  const rest = positionals.slice(words);
  if (command.arg && rest.length === 0) throw new UsageError(`"${name}" needs the key's ${command.arg}`);
  if (rest.length > (command.arg ? 1 : 0)) throw new UsageError(`Unexpected argument "${rest[command.arg ? 1 : 0]}"`);
  for (const option of Object.keys(values) as (keyof Values)[]) {
    if (!command.options.includes(option)) throw new UsageError(`"${name}" takes no --${option}`);
  }
  const missing = command.required.filter((option) => values[option] === undefined);
  if (missing.length > 0) throw new UsageError(`"${name}" needs ${missing.map((o) => `--${o}`).join(", ")}`);
  return { help: false, remote, command, values, arg: rest[0] ?? "" };
}

/** The error line for stderr: validation paths use the command line's own names. */
function errorBody(err: unknown): { error: string; code: string; details?: unknown } {
  if (err instanceof ApiError) {
    if (err.code === "VALIDATION_ERROR" && Array.isArray(err.details)) {
      const details = (err.details as Issue[]).map((d) => ({ path: FLAG_NAMES[d.path] ?? d.path, message: d.message }));
      return { error: `Invalid input: ${formatIssues(details)}`, code: err.code, details };
    }
    return { error: err.message, code: err.code };
  }
  // A D1 failure's drizzle message carries the SQL and every bound parameter (key hashes included): show its
  // cause instead, which names the problem alone.
  if (err instanceof DrizzleQueryError) {
    return { error: err.cause?.message ?? "The database query failed", code: "DATABASE_ERROR" };
  }
  return { error: err instanceof Error ? err.message : String(err), code: "INTERNAL_ERROR" };
}

async function main(argv: string[]): Promise<number> {
  const writeStdout = reserveStdout();
  let handle: D1Handle | undefined;
  try {
    const invocation = parseCommandLine(argv);
    if (invocation.help || !invocation.command) {
      await writeStdout(USAGE);
      return 0;
    }
    if (invocation.command.worker) {
      await writeStdout(`${JSON.stringify(await invocation.command.worker(invocation.values), null, 2)}\n`);
      return 0;
    }
    handle = await openD1({ remote: invocation.remote });
    if (!invocation.remote) {
      const pending = await pendingMigrations(handle.db);
      if (pending.length > 0) {
        process.stderr.write(`Applying ${pending.length} pending local migration(s): ${pending.join(", ")}\n`);
        await applyLocalMigrations();
      }
    } else {
      process.stderr.write(`Working on the ${handle.target}\n`);
    }
    const db = getDb(handle.db);
    const result = await invocation.command.run(db, invocation.values, invocation.arg, { db, cache: handle.keyCache });
    if (invocation.remote && invocation.command.changesKey) process.stderr.write(`${REMOTE_KEY_NOTE}\n`);
    await writeStdout(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${JSON.stringify(errorBody(err))}\n`);
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await handle?.dispose().catch(() => {});
  }
}

const code = await main(process.argv.slice(2));
// wrangler may leave handles open (its remote proxy session, timers): exit explicitly once stdout is flushed.
process.exit(code);
