/**
 * `npm run -s admin -- …` as docs/operations.md calls it, in a real shell: stdout holds the JSON alone, and a reader that
 * closes the pipe early ends the CLI quietly. Runs on Node (`npm run test:cli`), not inside workerd.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

function sh(script: string) {
  const run = spawnSync("bash", ["-c", script], { cwd: ROOT, encoding: "utf8", timeout: 240_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

test("stdout is one JSON value and nothing else, so it pipes into a JSON reader", () => {
  const run = sh("npm run -s admin -- tenant list");
  assert.equal(run.code, 0, run.stderr);
  assert.ok(Array.isArray(JSON.parse(run.stdout)), run.stdout);
  assert.doesNotMatch(run.stdout, /^>/m);
});

test("the help text goes to stdout alone too", () => {
  const run = sh("npm run -s admin -- --help");
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^Usage: npm run -s admin --/);
});

test("a reader that is already gone (| true) ends the CLI quietly: exit 0, no EPIPE, no stack", () => {
  for (const args of ["tenant list", "--help"]) {
    const run = sh(`npm run -s admin -- ${args} | true; echo "exit=\${PIPESTATUS[0]}" >&2`);
    assert.match(run.stderr, /exit=0\s*$/, run.stderr);
    assert.doesNotMatch(run.stderr, /EPIPE|Error|at .*\.ts:\d+/, run.stderr);
  }
});

test("a reader that stops after the first line (| head -n 1) gets that line, and the CLI exits 0", () => {
  const run = sh(`npm run -s admin -- --help | head -n 1; echo "exit=\${PIPESTATUS[0]}" >&2`);
  assert.equal(run.stdout.trim(), "Usage: npm run -s admin -- [--remote] <command>");
  assert.match(run.stderr, /exit=0\s*$/, run.stderr);
  assert.doesNotMatch(run.stderr, /EPIPE/, run.stderr);
});

test("facilitators asks the running Worker; none answering is BAD_GATEWAY on stderr, nothing on stdout", () => {
  const run = sh("npm run -s admin -- facilitators --base-url http://127.0.0.1:9");
  assert.equal(run.code, 1, run.stderr);
  assert.equal(run.stdout, "");
  assert.deepEqual(JSON.parse(run.stderr.trim().split("\n").at(-1) ?? ""), {
    error: "No Worker answered GET /v1/health at http://127.0.0.1:9: start it (npm run dev) or pass --base-url",
    code: "BAD_GATEWAY",
  });
});
