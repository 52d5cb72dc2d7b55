/**
 * Stopping `npm run dev` stops everything it started: SIGINT or SIGTERM to the npm process (not to its process
 * group) ends the dev script, wrangler and workerd, and frees the port. Linux (reads /proc). Runs on Node
 * (`npm run test:cli`), not inside workerd; each case starts a real `npm run dev` and takes a minute or more.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");
/** `DEV_CHECK_PORT` pins the port (a machine with assigned ports); otherwise any free one. */
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
    server.on("error", fail);
  });
}

/** Processes in a process group, from /proc: `pid command`. */
function processGroup(pgid: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid)
        found.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ")}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://localhost:${port}/v1/health`)).status === 200;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal} to the npm process stops wrangler and workerd and frees the port`, { timeout: 400_000 }, async () => {
    const port = process.env.DEV_CHECK_PORT ? Number(process.env.DEV_CHECK_PORT) : await freePort();
    // Its own process group, so this test can find every descendant and clean up whatever happens.
    const npm = spawn("npm", ["run", "dev", "--", "--port", String(port)], { cwd: ROOT, detached: true, stdio: "ignore" });
    const pgid = npm.pid!;
    try {
      await until(`npm run dev on port ${port}`, () => healthy(port), 300_000);
      assert.ok(
        processGroup(pgid).some((p) => p.includes("workerd")),
        "workerd runs",
      );

      process.kill(npm.pid!, signal); // the npm process only, as a supervisor or `kill <pid>` would
      await until("npm to exit", () => npm.exitCode !== null || npm.signalCode !== null, 30_000);
      await until("every process of the tree to end", () => processGroup(pgid).length === 0, 30_000).catch((err) => {
        throw new Error(`${err.message}; still running:\n${processGroup(pgid).join("\n")}`);
      });
      assert.equal(await healthy(port), false, "the port no longer answers");
      const server = createServer();
      await new Promise<void>((done, fail) =>
        server.once("error", fail).listen(port, "127.0.0.1", () => server.close(() => done())),
      );
    } finally {
      if (processGroup(pgid).length > 0) process.kill(-pgid, "SIGKILL");
    }
  });
}
