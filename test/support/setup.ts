// Setup file, before every test file: the schema on the test database (applied once per runtime: test files that
// share a runtime share its database), the console captured and silenced (console.ts), and the real clock back after
// every test that moved it (clock.ts).
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, vi } from "vitest";
import { installConsoleCapture } from "./console.ts";

installConsoleCapture();
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

afterEach(() => {
  vi.useRealTimers();
});
