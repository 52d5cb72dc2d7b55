import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => ({
  // FUZZ_RUNS, FUZZ_MODEL_RUNS, FUZZ_MODEL_COMMANDS, FUZZ_SEED: larger or reproducible adversarial runs (see README).
  envPrefix: ["VITE_", "FUZZ_"],
  test: {
    // The Worker's access log prints a JSON line per request; keep the test output to what tests print themselves.
    onConsoleLog: (log: string) => !log.startsWith('{"requestId":"req_'),
    projects: [
      // Inside workerd: everything but the browser tests.
      {
        plugins: [
          cloudflareTest({
            main: "./test/support/worker.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                // A fixed test key ring (never used outside tests).
                ENCRYPTION_KEY: "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
              },
              // An empty database for the migration upgrade-path tests.
              d1Databases: ["MIGRATION_DB"],
              durableObjects: {
                RACY_RATE_LIMITER: { className: "RacyRateLimiter", useSQLite: true },
              },
            },
          }),
        ],
        envPrefix: ["VITE_", "FUZZ_"],
        test: {
          name: "workerd",
          include: ["test/**/*.test.ts"],
          exclude: ["test/browser/**", "**/node_modules/**"],
          setupFiles: ["./test/support/apply-migrations.ts", "./test/support/canary-scan.ts"],
        },
      },
      // In Node: the production bundle in Miniflare on real sockets, and a headless Chromium (test/browser/support).
      { test: { name: "browser", include: ["test/browser/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 180_000 } },
    ],
  },
}));
