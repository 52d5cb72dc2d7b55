/**
 * What the deployed Worker's configuration promises about credentials, read the way wrangler reads it: Workers traces
 * stay off (their fetch spans keep every subrequest's URL whole, and an upstream URL may carry a tenant's `query-param`
 * credential), and the request URLs of logs lose their query strings (a client may send a key there before the API
 * refuses it). docs/security.md, "Traces and logs", explains both. Runs on Node (`npm run test:cli`).
 */
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { test } from "node:test";
import { experimental_readRawConfig, unstable_readConfig } from "wrangler";

const path = resolve(import.meta.dirname, "../../wrangler.toml");
/** The top-level configuration, and each `[env.<name>]` one a deploy may name with `--env`. */
const envNames = Object.keys(experimental_readRawConfig({ config: path }).rawConfig.env ?? {});
const configs = [undefined, ...envNames].map((env) => ({
  env: env ?? "top level",
  config: unstable_readConfig({ config: path, env }),
}));

test("traces are off in production and nothing turns them on for a route", () => {
  for (const { env, config } of configs) assert.equal(config.observability?.traces?.enabled, false, env);
});

test("logs are kept, with query strings redacted from request URLs", () => {
  for (const { env, config } of configs) {
    assert.equal(config.observability?.enabled, true, env);
    assert.equal(config.observability?.redact_query_string, true, env);
  }
});
