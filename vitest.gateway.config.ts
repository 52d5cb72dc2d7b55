/**
 * `npm run test:gateway`: the payment gateway end to end against real local processes (test/localnet/README.md).
 *
 * - project "gateway": test/gateway/** (and test/localnet/workerd/**), inside workerd like the main suite, with the local chain, facilitator and
 *   upstream started once by a globalSetup; the Worker's outbound fetch to `*.gateway.test` is routed to them by
 *   Miniflare's `outboundService` (no SSRF rule is relaxed), and `NETWORK_OVERRIDES` points the network table at
 *   the local token.
 * - project "localnet": test/localnet/**, in Node: the local stack itself, proven with the standards' own code, and
 *   the production bundle (test/localnet/bundle.test.ts) run through the gateway's outcomes.
 *
 * The Worker's modules here are the ones the production bundle is made of: the same packages, resolved through the
 * same `workerd`/`worker`/`browser` export conditions, none substituted.
 *
 * A separate config so the main suite (`npm test`) never pays the chain start-up; .ci/run runs both.
 */
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { createOutboundRouter, GATEWAY_TEST_HOSTS, outboundService } from "./src/cli/localnet/outbound.ts";
import type { StackInfo } from "./src/cli/localnet/stack.ts";
import { webhookReceiver } from "./test/support/webhook-receiver.ts";

/**
 * mppx's files end in `//# sourceMappingURL=…` for maps its package does not ship: vite warns once per file it
 * transforms (about 150). The modules load as they are; only that warning is dropped.
 */
function quietMissingMppxSourceMaps(): Plugin {
  return {
    name: "quiet-missing-mppx-source-maps",
    configResolved(config) {
      const warn = config.logger.warn.bind(config.logger);
      config.logger.warn = (msg, options) => {
        if (msg.startsWith("Failed to load source map for") && msg.includes("/node_modules/mppx/")) return;
        warn(msg, options);
      };
    },
  };
}

/**
 * The local stack's routes, and the webhook receiver stand-in (test/support/webhook-receiver.ts) in front of them: a
 * payment's webhook events reach `hooks.receiver.test` as in the main suite.
 */
function withWebhookReceiver(routes: Parameters<typeof createOutboundRouter>[0]) {
  const receiver = webhookReceiver();
  const router = createOutboundRouter(routes);
  return async (request: Request) => (await receiver(request)) ?? router(request);
}

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    test: {
      projects: [
        {
          plugins: [
            quietMissingMppxSourceMaps(),
            cloudflareTest(({ inject }) => {
              const net = inject<StackInfo>("localnet");
              return {
                main: "./test/support/worker.ts",
                wrangler: { configPath: "./wrangler.toml" },
                miniflare: {
                  bindings: {
                    TEST_MIGRATIONS: migrations,
                    // A fixed test key ring (never used outside tests).
                    ENCRYPTION_KEY: "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
                    NETWORK_OVERRIDES: net.networkOverrides,
                    // A fixed receiver authorizer for sessions (never used outside tests).
                    SESSION_AUTHORIZER_KEY: `0x${"5e".repeat(32)}`,
                    // Every request reads its paywall's state, so a change is the next request's; test/gateway/paywall-state.test.ts
                    // holds the kept state (production: 2 s) to its bound.
                    PAYWALL_STATE_TTL_MS: "0",
                    // Payments are recorded in their objects (wrangler.toml's default); `PAYMENT_RECORDS=d1 npx vitest …`
                    // runs the files over the D1 ledger.
                    ...(process.env.PAYMENT_RECORDS ? { PAYMENT_RECORDS: process.env.PAYMENT_RECORDS } : {}),
                  },
                  d1Databases: ["MIGRATION_DB"],
                  durableObjects: { RACY_RATE_LIMITER: { className: "RacyRateLimiter", useSQLite: true } },
                  outboundService: outboundService(
                    withWebhookReceiver({
                      [GATEWAY_TEST_HOSTS.upstream]: net.upstreamUrl,
                      [GATEWAY_TEST_HOSTS.facilitator]: net.facilitatorUrl,
                      [GATEWAY_TEST_HOSTS.secondFacilitator]: net.secondFacilitatorUrl,
                      [GATEWAY_TEST_HOSTS.rpc]: net.rpcUrl,
                      ...(net.tempo ? { [GATEWAY_TEST_HOSTS.tempoRpc]: net.tempo.rpcUrl } : {}),
                      // A name that is routed, to a port where nothing listens: the upstream that cannot be reached.
                      [GATEWAY_TEST_HOSTS.unreachable]: "http://127.0.0.1:2",
                    }),
                  ),
                },
              };
            }),
          ],
          test: {
            name: "gateway",
            globalSetup: ["./test/localnet/global-setup.ts"],
            // The main suite's setup files (vitest.config.ts): migrations, the console capture, the canary scan.
            setupFiles: ["./test/support/setup.ts", "./test/support/canary-scan.ts"],
            include: ["test/gateway/**/*.test.ts", "test/localnet/workerd/**/*.test.ts"],
            // A payment's records reach D1 (what the tests read back through the API) through the payment-records
            // queue's batch, up to about 2 s after its outcome: past the default 5 s for a test that reads them twice.
            testTimeout: 20_000,
          },
        },
        {
          test: {
            name: "localnet",
            environment: "node",
            include: ["test/localnet/**/*.test.ts"],
            exclude: ["test/localnet/workerd/**"],
            testTimeout: 60_000,
            hookTimeout: 60_000,
          },
        },
      ],
    },
  };
});
