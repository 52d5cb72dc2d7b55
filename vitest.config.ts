import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig(async () => ({
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
  // FUZZ_RUNS, FUZZ_MODEL_RUNS, FUZZ_MODEL_COMMANDS, FUZZ_SEED: larger or reproducible adversarial runs (see README).
  envPrefix: ["VITE_", "FUZZ_"],
  test: {
    // The Worker's access log prints a JSON line per request; keep the test output to what tests print themselves.
    onConsoleLog: (log: string) => !log.startsWith('{"requestId":"req_'),
    setupFiles: ["./test/support/apply-migrations.ts", "./test/support/canary-scan.ts"],
    include: ["test/**/*.test.ts"],
    // The payment gateway's end-to-end tests and the local chain run with `npm run test:gateway` (vitest.gateway.config.ts).
    exclude: [...configDefaults.exclude, "test/gateway/**", "test/localnet/**"],
  },
}));
