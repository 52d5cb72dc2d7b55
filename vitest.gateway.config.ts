/**
 * `npm run test:gateway`: the payment gateway end to end against real local processes (test/localnet/README.md).
 *
 * - project "gateway": test/gateway/** (and test/localnet/workerd/**), inside workerd like the main suite, with the local chain, facilitator and
 *   upstream started once by a globalSetup; the Worker's outbound fetch to `*.gateway.test` is routed to them by
 *   Miniflare's `outboundService` (no SSRF rule is relaxed), and `NETWORK_OVERRIDES` points the network table at
 *   the local token.
 * - project "localnet": test/localnet/**, in Node: the local stack itself, proven with the standards' own code.
 *
 * A separate config so the main suite (`npm test`) never pays the chain start-up; .ci/run runs both.
 */
import { readFileSync } from "node:fs";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { fileSubstitutions, moduleSubstitutions } from "./src/cli/build.ts";
import { createOutboundRouter, GATEWAY_TEST_HOSTS } from "./test/localnet/outbound.ts";
import type { StackInfo } from "./test/localnet/stack.ts";

/**
 * The production build's substitutions (src/cli/build.ts), so the MPP tests pay through the shape that ships, but for
 * the `bundleOnly` ones, which the buyers these tests run in the same runtime need whole (test/localnet/bundle.test.ts
 * pays through the whole production bundle). Its narrowed ox barrels are the same modules, and zod's English-only
 * locales change no message: not repeated here.
 * mppx's inlined payment page is one of them, and must be: at 720 KB it is larger than the 1 MiB WebSocket message the
 * vitest pool ships modules into workerd with ("Message is too large").
 */
function productionSubstitutions(): Plugin {
  const PREFIX = "\0module-substitution:";
  return {
    name: "module-substitutions",
    enforce: "pre",
    resolveId(source, importer) {
      const i = moduleSubstitutions.findIndex(
        (s) =>
          !s.bundleOnly && s.specifier === source && importer !== undefined && s.importer.test(importer.replaceAll("\\", "/")),
      );
      return i === -1 ? undefined : `${PREFIX}${i}`;
    },
    load(id) {
      if (id.startsWith(PREFIX)) return moduleSubstitutions[Number(id.slice(PREFIX.length))]?.contents();
      const path = id.split("?")[0]?.replaceAll("\\", "/") ?? "";
      const file = fileSubstitutions.find((s) => s.file.test(path));
      if (file) return { code: file.contents(), map: null };
      // mppx's files, now transformed here rather than pre-bundled, name source maps its package does not ship:
      // loaded without them, so the run does not print a warning per file.
      if (/\/node_modules\/mppx\/dist\/.*\.js$/.test(id.replaceAll("\\", "/"))) {
        return { code: readFileSync(id.split("?")[0] as string, "utf8"), map: null };
      }
      return undefined;
    },
  };
}

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    test: {
      projects: [
        {
          plugins: [
            productionSubstitutions(),
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
                  },
                  d1Databases: ["MIGRATION_DB"],
                  durableObjects: { RACY_RATE_LIMITER: { className: "RacyRateLimiter", useSQLite: true } },
                  outboundService: createOutboundRouter({
                    [GATEWAY_TEST_HOSTS.upstream]: net.upstreamUrl,
                    [GATEWAY_TEST_HOSTS.facilitator]: net.facilitatorUrl,
                    [GATEWAY_TEST_HOSTS.rpc]: net.rpcUrl,
                    ...(net.tempo ? { [GATEWAY_TEST_HOSTS.tempoRpc]: net.tempo.rpcUrl } : {}),
                  }),
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
