/**
 * The first start of `npm run dev` on a fresh clone ends with the ready block: the demo key, a `curl` with it, the
 * dashboard's one-time sign-in link and how to make another key, framed, after wrangler said it is ready, and no
 * table of migrations anywhere. A copy of the project (its node_modules linked) in a temporary directory stands for
 * the fresh clone, so the check never touches this checkout's `.wrangler` or `.dev.vars`. Runs on Node
 * (`npm run test:cli`); takes a minute or two.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { stripVTControlCharacters } from "node:util";

const ROOT = resolve(import.meta.dirname, "../..");
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
    server.on("error", fail);
  });
}

/** A fresh clone's files (what `npm run dev` reads), with this checkout's node_modules linked. */
function freshCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "dev-first-start-"));
  for (const entry of ["package.json", "wrangler.toml", "tsconfig.json", "src", "migrations"]) {
    cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

function processGroupAlive(pgid: number): boolean {
  return readdirSync("/proc").some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid;
    } catch {
      return false;
    }
  });
}

test("the first start ends with the framed ready block, and prints no migration table", { timeout: 400_000 }, async () => {
  const dir = freshCopy();
  const port = process.env.DEV_CHECK_PORT ? Number(process.env.DEV_CHECK_PORT) : await freePort();
  const npm = spawn("npm", ["run", "dev", "--", "--port", String(port)], {
    cwd: dir,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let lastOutputAt = Date.now();
  const collect = (chunk: Buffer) => {
    output += chunk.toString("utf8");
    lastOutputAt = Date.now();
  };
  npm.stdout.on("data", collect);
  npm.stderr.on("data", collect);
  try {
    // Ready (wrangler says so, or the health check answers), then idle: nothing printed for 8 s.
    const deadline = Date.now() + 300_000;
    const healthy = () =>
      fetch(`http://localhost:${port}/v1/health`).then(
        (r) => r.status === 200,
        () => false,
      );
    const waitFor = async (what: string, check: () => boolean | Promise<boolean>) => {
      while (!(await check())) {
        assert.ok(Date.now() < deadline, `npm run dev: timed out waiting for ${what}; its output:\n${output}`);
        assert.equal(npm.exitCode, null, `npm run dev exited early:\n${output}`);
        await sleep(500);
      }
    };
    await waitFor("ready", () => output.includes("Ready on") || healthy());
    await waitFor("idle", () => Date.now() - lastOutputAt > 8000);
    const lines = stripVTControlCharacters(output).split("\n");
    while (lines.at(-1)?.trim() === "") lines.pop();
    // A Cron Trigger that fires meanwhile (npm run dev runs them on schedule) logs its one JSON line after the block:
    // the block is the last thing the start printed.
    while (/^\{"cron":/.test(lines.at(-1) ?? "")) lines.pop();
    const title = lines.lastIndexOf("YOUR LOCAL API IS READY");
    assert.ok(title > 0, `no ready block in:\n${output}`);
    const block = lines.slice(title - 1);
    assert.match(block[0]!, /^={20,}$/, "framed above");
    assert.match(block.at(-1)!, /^={20,}$/, "framed below, and the last line printed");
    assert.ok(block.length <= 25, `short: ${block.length} lines`);
    const text = block.join("\n");
    const key = /^ {2}(mpk_[0-9a-f]{64})$/m.exec(text)?.[1];
    assert.ok(key, `the key on a line of its own:\n${text}`);
    assert.match(text, new RegExp(`curl -H "Authorization: Bearer ${key}" http://localhost:${port}/v1/me`));
    assert.match(text, new RegExp(`http://localhost:${port}/dashboard/sign-in/link\\?token=[0-9a-f]+`));
    assert.match(text, /npm run -s admin -- key create --tenant ten_\w+/, "where to get a key again");
    assert.ok(output.indexOf("Ready on") < output.lastIndexOf("YOUR LOCAL API IS READY"), "after wrangler is ready");
    // The key works.
    const me = await fetch(`http://localhost:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(me.status, 200);
    // No migration table: neither its frame nor its file names.
    assert.doesNotMatch(output, /[┌└│]|0000_foundation\.sql|Migrations to be applied/);
    assert.match(output, /Local D1 database: \d+ migration\(s\) applied \(--verbose shows them\)/);
  } finally {
    if (processGroupAlive(npm.pid!)) process.kill(-npm.pid!, "SIGTERM");
    for (let i = 0; i < 60 && processGroupAlive(npm.pid!); i++) await sleep(500);
    if (processGroupAlive(npm.pid!)) process.kill(-npm.pid!, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
