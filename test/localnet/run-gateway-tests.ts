/**
 * `npm run test:gateway`: every workerd file of the "gateway" project in a vitest run of its own, then the
 * "localnet" project (Node) in one run. Exits with the first failure's code.
 *
 * Why one run per workerd file: in one run of all of them, on a 2-core machine, a few tests time out (4 of 107 here,
 * most on their file's first MPP payment, which loads mppx's modules into a fresh test runtime: seconds); each file
 * alone passes. A run per file costs a few seconds each (the local chain starts in under a second; the
 * contracts are compiled once and cached).
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");
const VITEST = join(ROOT, "node_modules", ".bin", "vitest");
const CONFIG = "vitest.gateway.config.ts";

const testsIn = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();

const workerdFiles = [...testsIn("test/gateway"), ...testsIn("test/localnet/workerd")];
const runs: string[][] = [...workerdFiles.map((file) => ["--project", "gateway", file]), ["--project", "localnet"]];

const extra = process.argv.slice(2);
for (const args of runs) {
  console.log(`\n=== vitest run --config ${CONFIG} ${args.join(" ")}`);
  const run = spawnSync(VITEST, ["run", "--config", CONFIG, ...args, ...extra], { cwd: ROOT, stdio: "inherit" });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
console.log(
  `\ntest:gateway: ${runs.length} runs passed (${workerdFiles.length} workerd files, one at a time, and the localnet project)`,
);
