import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { outboundService, Unreachable } from "./src/cli/localnet/outbound.ts";
import { NETWORK_TABLE } from "./src/core/money/network-table.ts";
import { webhookReceiver } from "./test/support/webhook-receiver.ts";

/** A fixed test key ring (never used outside tests). */
const TEST_ENCRYPTION_KEY = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

// wrangler.toml declares ENCRYPTION_KEY a required secret; wrangler looks for it in .dev.vars, .env or the process
// environment when it reads the config for the test runtime, and warns once per runtime without it. The runtime
// gets the test key ring from `bindings` below either way.
process.env.ENCRYPTION_KEY ??= TEST_ENCRYPTION_KEY;

/** The public chains' RPC hosts: no chain runs in this suite (the gateway suite has the local ones). */
const RPC_HOSTS = new Set(Object.values(NETWORK_TABLE).map((n) => new URL(n.rpcUrl).host));

/**
 * A chain's RPC answers every call with a JSON-RPC error: a chain read fails as an RPC failure, as it does when a
 * provider is down, without the connection error workerd prints as an uncaught exception (the payment sweep a test
 * runs reads the chain for every PENDING payment the suite's files left).
 */
const rpcUnavailable = () =>
  Response.json({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "no chain in the workerd suite" } });

/** Outbound fetch in the workerd suite: the webhook receiver stand-in, chains that answer errors, and nothing else. */
const receiver = webhookReceiver();
const outbound = async (request: Request): Promise<Response> => {
  const answer = await receiver(request);
  if (answer) return answer;
  if (RPC_HOSTS.has(new URL(request.url).host)) return rpcUnavailable();
  throw new Unreachable(`${new URL(request.url).host} is not routed in tests`);
};

/** The Worker under test, inside workerd with real D1 and Durable Objects. */
const worker = async () =>
  cloudflareTest({
    main: "./test/support/worker.ts",
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      bindings: {
        TEST_MIGRATIONS: await readD1Migrations("./migrations"),
        ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        // Requests without CF-Connecting-IP share one client-address bucket (`ip:unknown`), and most test requests
        // send none: the limit is out of reach here, and tests of the per-address limit set their own, with an address
        // of their own (test/foundation/client-rate-limit.test.ts).
        IP_RATE_LIMIT_MAX: "1000000000",
        // Every request reads its paywall's state, so a change is the next request's; test/gateway/paywall-state.test.ts
        // holds the kept state (production: 2 s) to its bound.
        PAYWALL_STATE_TTL_MS: "0",
        // Sessions: no settlement run fires here (a day apart). Settlement needs the local chain and is tested in the
        // gateway project; here an index object's alarm would only start during a later file, and the test runner loads
        // the settlement module (a dynamic import) once for every object, so two objects' first runs at once resume
        // in each other's context ("Cannot perform I/O on behalf of a different Durable Object"). A bundle has no such
        // load: its dynamic imports are already in the one script.
        SESSION_SETTLE_INTERVAL_SECONDS: "86400",
        SESSION_IDLE_REFUND_SECONDS: "86400",
      },
      // Empty databases for the migration upgrade-path tests and the roll-up backfill test (one each: files share a runtime).
      d1Databases: ["MIGRATION_DB", "BACKFILL_DB"],
      durableObjects: {
        RACY_RATE_LIMITER: { className: "RacyRateLimiter", useSQLite: true },
      },
      // The Worker's outbound fetch: webhook deliveries to `hooks.receiver.test` reach a local receiver stand-in
      // (test/support/webhook-receiver.ts); any other host is unreachable, as without a network.
      outboundService: outboundService(outbound) as never,
    },
  });

export default defineConfig(async () => ({
  plugins: [await worker()],
  // FUZZ_RUNS, FUZZ_MODEL_RUNS, FUZZ_MODEL_COMMANDS, FUZZ_SEED: larger or reproducible adversarial runs (docs/development.md).
  envPrefix: ["VITE_", "FUZZ_"],
  test: {
    projects: [
      // Inside workerd (the plugin above): everything but the browser tests.
      {
        extends: true,
        test: { name: "workerd", exclude: ["test/browser/**", "test/gateway/**", "test/localnet/**", "**/node_modules/**"] },
      },
      // In Node: the production bundle in Miniflare on real sockets, and a headless Chromium (test/browser/support).
      {
        extends: false,
        test: { name: "browser", include: ["test/browser/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 180_000 },
      },
    ],
    // Before every test file: migrations, the console captured and silenced (test/support/console.ts), the canary scan.
    setupFiles: ["./test/support/setup.ts", "./test/support/canary-scan.ts"],
    include: ["test/**/*.test.ts"],
    // Test files run one after another in a few runtimes instead of one runtime each: starting workerd and
    // evaluating the app costs most of a second per file. Files stay independent: each makes its own tenants,
    // keys and rows, and the canary scan harvests only the rows written since its file began.
    isolate: false,
    // Two runtimes side by side use both cores of a 2-core machine: the suite takes about 60% of the time it takes
    // in one (the default on two cores is one worker).
    maxWorkers: 2,
    // The canary scan's hooks read D1 after each test; on a busy machine that can outlast the 10 s default.
    hookTimeout: 30_000,
  },
}));
