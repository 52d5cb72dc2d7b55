/**
 * The operator CLI's key changes reach a running `npm run dev` from the next request on: the CLI writes D1, then tells
 * each changed key's Durable Object in the dev server through wrangler's dev registry (src/cli/platform.ts). With no
 * dev server running, the change is in D1 alone and the next dev server reads it. Runs on Node (`npm run test:cli`)
 * against this checkout's local D1, with a dev registry of its own (so no other dev server on the machine answers for
 * this one); starts real dev servers, a minute or more each.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");
const REGISTRY = mkdtempSync(join(tmpdir(), "key-cache-check-registry-"));
/** wrangler reads its dev registry from WRANGLER_REGISTRY_PATH (Miniflare from CLOUDFLARE_DEV_REGISTRY_PATH first). */
const ENV = { ...process.env, WRANGLER_REGISTRY_PATH: REGISTRY, CLOUDFLARE_DEV_REGISTRY_PATH: REGISTRY };
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

after(() => rmSync(REGISTRY, { recursive: true, force: true }));

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
    server.on("error", fail);
  });
}

/** `npm run -s admin -- …`: its JSON answer (exit 0 required). */
function admin(...args: string[]): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    const child = spawn("npm", ["run", "-s", "admin", "--", ...args], { cwd: ROOT, env: ENV });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c));
    child.stderr.on("data", (c: Buffer) => (stderr += c));
    child.on("exit", (code) =>
      code === 0 ? done(JSON.parse(stdout)) : fail(new Error(`admin ${args.join(" ")}: ${code} ${stderr}`)),
    );
  });
}

async function me(port: number, key: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`http://localhost:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { code?: string };
  return { status: res.status, code: body.code };
}

/** Processes in a process group, from /proc. */
function processGroup(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** `npm run dev` on `port`, in a process group of its own, registered in this check's dev registry. */
async function startDev(port: number): Promise<ChildProcess> {
  const npm = spawn("npm", ["run", "dev", "--", "--port", String(port)], {
    cwd: ROOT,
    env: ENV,
    detached: true,
    stdio: "ignore",
  });
  await until(
    `npm run dev on port ${port}`,
    async () => (await fetch(`http://localhost:${port}/v1/health`)).status === 200,
    300_000,
  );
  // The registry entry is written once the dev server is ready: the CLI finds it from then on.
  await until("the dev registry entry", async () => readdirSync(REGISTRY).length > 0, 30_000);
  return npm;
}

async function stopDev(npm: ChildProcess): Promise<void> {
  const pgid = npm.pid!;
  process.kill(npm.pid!, "SIGTERM");
  await until("the dev server to stop", async () => processGroup(pgid).length === 0, 30_000).catch(() => {
    if (processGroup(pgid).length > 0) process.kill(-pgid, "SIGKILL");
  });
}

test("a key change by the CLI holds from the dev server's next request on, with requests racing it", {
  timeout: 600_000,
}, async () => {
  const suffix = Date.now().toString(36);
  const tenant = await admin(
    "tenant",
    "create",
    "--email",
    `key-cache-${suffix}@example.com`,
    "--name",
    "Key cache check",
    "--wallet",
    `0x${"ab".repeat(20)}`,
  );
  const created = await admin("key", "create", "--tenant", String(tenant.id), "--name", "cli-race", "--scopes", "events:read");
  const key = String(created.key);
  const id = String(created.id);

  const port = await freePort();
  let dev = await startDev(port);
  try {
    assert.equal((await me(port, key)).status, 200); // the dev server's object now holds the record

    // Clients send without pause while the CLI pauses the key; the CLI takes seconds to start.
    let returned = false;
    let stop = false;
    const sentAfter: { status: number; code?: string }[] = [];
    const clients = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const after = returned;
        const answer = await me(port, key);
        if (after) sentAfter.push(answer);
      }
    });
    assert.equal((await admin("key", "pause", id)).status, "paused");
    returned = true;
    while (sentAfter.length < 40) await sleep(10);
    stop = true;
    await Promise.all(clients);
    assert.deepEqual(new Set(sentAfter.map((a) => a.code)), new Set(["KEY_INACTIVE"]));

    await admin("key", "resume", id);
    assert.equal((await me(port, key)).status, 200);
    await admin("key", "revoke", id);
    assert.equal((await me(port, key)).code, "KEY_REVOKED");

    // No dev server running: the change is in D1 alone, and the next dev server reads it.
    const other = await admin("key", "create", "--tenant", String(tenant.id), "--name", "cli-offline", "--scopes", "events:read");
    assert.equal((await me(port, String(other.key))).status, 200);
    await stopDev(dev);
    await admin("key", "pause", String(other.id));
    dev = await startDev(port);
    assert.equal((await me(port, String(other.key))).code, "KEY_INACTIVE");
    await admin("key", "delete", String(other.id));
    assert.equal((await me(port, String(other.key))).code, "INVALID_API_KEY");
  } finally {
    await stopDev(dev);
  }
});
