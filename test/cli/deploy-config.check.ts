/**
 * What the deployed Worker's configuration promises about credentials, read the way wrangler reads it: Workers traces
 * stay off (their fetch spans keep every subrequest's URL whole, and an upstream URL may carry a tenant's `query-param`
 * credential), and the request URLs of logs lose their query strings (a client may send a key there before the API
 * refuses it). docs/security.md, "Traces and logs", explains both. And no var that only `npm run dev` may pass (upstreams
 * or webhook endpoints on this machine; docs/security.md, "SSRF") is set at the top level or in any `[env.*]`.
 * Runs on Node (`npm run test:cli`).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { experimental_readRawConfig, unstable_readConfig } from "wrangler";

const path = resolve(import.meta.dirname, "../../wrangler.toml");
/** The top-level configuration, and each `[env.<name>]` one a deploy may name with `--env`. */
const configsOf = (file: string) =>
  [undefined, ...Object.keys(experimental_readRawConfig({ config: file }).rawConfig.env ?? {})].map((env) => ({
    env: env ?? "top level",
    config: unstable_readConfig({ config: file, env }),
  }));
const configs = configsOf(path);

/** Vars only `npm run dev` passes (src/cli/dev.ts); the Worker honours them only with a loopback payment origin. */
const DEV_ONLY_VARS = ["UPSTREAMS_ALLOW_LOOPBACK", "WEBHOOKS_ALLOW_LOOPBACK"];
/** "<env>: <var>" for each dev-only var a configuration sets. */
const devOnlyVarsSet = (list: ReturnType<typeof configsOf>) =>
  list.flatMap(({ env, config }) => DEV_ONLY_VARS.filter((name) => name in (config.vars ?? {})).map((name) => `${env}: ${name}`));

test("no dev-only var is set for a deploy, at the top level or in any environment", () => {
  assert.deepEqual(devOnlyVarsSet(configs), []);
});

test("the dev-only var check finds the var in [vars] and in an [env.*]", () => {
  const dir = mkdtempSync(join(tmpdir(), "deploy-config-"));
  try {
    const file = join(dir, "wrangler.toml");
    writeFileSync(
      file,
      [
        'name = "x"',
        'main = "index.ts"',
        'compatibility_date = "2026-11-01"',
        "[vars]",
        'UPSTREAMS_ALLOW_LOOPBACK = "on"',
        "[env.staging.vars]",
        'UPSTREAMS_ALLOW_LOOPBACK = "off"',
        'WEBHOOKS_ALLOW_LOOPBACK = "on"',
        "",
      ].join("\n"),
    );
    // Set at all, even "off": a deploy has no reason to carry it.
    assert.deepEqual(devOnlyVarsSet(configsOf(file)), [
      "top level: UPSTREAMS_ALLOW_LOOPBACK",
      "staging: UPSTREAMS_ALLOW_LOOPBACK",
      "staging: WEBHOOKS_ALLOW_LOOPBACK",
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("traces are off in production and nothing turns them on for a route", () => {
  for (const { env, config } of configs) assert.equal(config.observability?.traces?.enabled, false, env);
});

test("logs are kept, with query strings redacted from request URLs", () => {
  for (const { env, config } of configs) {
    assert.equal(config.observability?.enabled, true, env);
    assert.equal(config.observability?.redact_query_string, true, env);
  }
});
