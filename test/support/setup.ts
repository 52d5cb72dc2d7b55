// Setup file, before every test file: the schema on the test database (applied once per runtime: test files that
// share a runtime share its database), and the real clock back after every test that moved it (clock.ts).
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, vi } from "vitest";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

afterEach(() => {
  vi.useRealTimers();
});
