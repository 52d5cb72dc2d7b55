/**
 * vitest globalSetup of the gateway tests (vitest.gateway.config.ts): starts the local stack once per run in the
 * vitest main process and `provide()`s its description; tests read it with `inject("localnet")`, and the Worker's
 * outbound fetch to `*.gateway.test` is routed to it (./outbound.ts). Everything stops at teardown.
 */
import type { TestProject } from "vitest/node";
import { startStack } from "../../src/cli/localnet/stack.ts";

export default async function setup(project: TestProject) {
  const started = Date.now();
  const stack = await startStack();
  project.provide("localnet", stack.info);
  if (process.env.LOCALNET_VERBOSE) {
    process.stderr.write(
      `localnet up in ${Date.now() - started} ms: chain ${stack.info.rpcUrl}, facilitator ${stack.info.facilitatorUrl}, upstream ${stack.info.upstreamUrl}\n`,
    );
  }
  return () => stack.stop();
}
