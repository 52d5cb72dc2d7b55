/**
 * `npm run webhooks:listen` refuses what it cannot use in one line on stderr and a non-zero exit, never a Node stack
 * trace: a key the API refuses (against the production bundle, served as under `npm run dev`), and an API that is not
 * running. Runs on Node (`npm run test:cli`).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { after, before, test } from "node:test";
import { type RunningWorker, startWorker } from "../browser/support/worker.ts";

const ROOT = resolve(import.meta.dirname, "../..");

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
    server.on("error", fail);
  });
}

/** Runs the listener to its exit (it must exit by itself: each case is a refusal). */
function listen(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["src/cli/webhooks-listen.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, KEY: "" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", fail);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

function assertOneLine(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) {
  assert.notEqual(result.code, 0, "exits non-zero");
  assert.equal(result.stdout, "");
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line, got:\n${result.stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(result.stderr, /\bat .*:\d+:\d+|Error:|node:internal/, "no stack trace");
}

let worker: RunningWorker;
before(async () => {
  worker = await startWorker({ port: await freePort() });
});
after(() => worker?.stop());

test("a key the API refuses: one line naming the refusal, exit non-zero", { timeout: 120_000 }, async () => {
  const result = await listen(["--key", "mpk_not_a_real_key", "--api", worker.url, "--port", String(await freePort())]);
  assertOneLine(result, /^webhooks:listen: the API refused the key \(INVALID_API_KEY: /);
  assert.ok(!result.stderr.includes("mpk_not_a_real_key"), "the key is not echoed");
});

test("no API at the address: one line saying so, exit non-zero", { timeout: 60_000 }, async () => {
  const result = await listen(["--key", "mpk_x", "--api", `http://127.0.0.1:${await freePort()}`]);
  assertOneLine(result, /^webhooks:listen: cannot reach the API at http:\/\/127\.0\.0\.1:\d+ \(is npm run dev running\?/);
});
