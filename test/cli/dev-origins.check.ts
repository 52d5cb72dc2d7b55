/**
 * `npm run dev` and `npm run dev -- --payments` as a developer runs them, over HTTP: the API and dashboard answer on
 * `localhost`, the payment URLs on `127.0.0.1` (the same port); the API's and the dashboard's payment URLs are the
 * latter and `npm run buy` pays them; the README's `dashboard-link` call prints JSON alone; `--payments` serves with
 * sign-up open, as the banner says; and a credential sent in a URL (a tenant's `query-param` credential on a paid
 * call, a raw API key in a probe's query string) is nowhere in `.wrangler/state` afterwards (local traces are off).
 * Runs on Node (`npm run test:cli`); each case starts a real `npm run dev` and takes a minute or two.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");
const STATE = join(ROOT, ".wrangler", "state");
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * fetch, once more when the pooled connection turns out closed (the dev server drops idle keep-alive connections
 * while a step of this check runs a CLI): what a browser does too.
 */
async function fetch(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await globalThis.fetch(url, init);
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw err;
    return globalThis.fetch(url, init);
  }
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
    server.on("error", fail);
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

/** `npm run -s <args>` in a shell, as the README writes it. */
function npm(args: string) {
  const run = spawnSync("bash", ["-c", `npm run -s ${args}`], { cwd: ROOT, encoding: "utf8", timeout: 240_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

interface Dev {
  port: number;
  output: () => string;
  stop(): Promise<void>;
}

async function startDev(extra: string[], env: Record<string, string> = {}): Promise<Dev> {
  const port = await freePort();
  let output = "";
  const child: ChildProcess = spawn("npm", ["run", "dev", "--", "--port", String(port), ...extra], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const stop = async () => {
    if (child.exitCode !== null) return;
    process.kill(child.pid as number, "SIGTERM");
    await until("npm run dev to stop", () => child.exitCode !== null || child.signalCode !== null, 60_000).catch(() =>
      process.kill(-(child.pid as number), "SIGKILL"),
    );
  };
  try {
    const ready = extra.includes("--payments") ? () => output.includes("LOCAL PAYMENT LOOP") : async () => healthy(port);
    await until(`npm run dev ${extra.join(" ")} on port ${port}`, ready, 400_000);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output.slice(-3000)}`);
  }
  return { port, output: () => output, stop };
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://localhost:${port}/v1/health`)).status === 200;
  } catch {
    return false;
  }
}

/** The demo tenant (or the first) of the local database, and a fresh key of it with the given scopes. */
function keyOfDemoTenant(): { tenant: string; key: string; id: string } {
  const list = npm("admin -- tenant list");
  assert.equal(list.code, 0, list.stderr);
  const tenants = JSON.parse(list.stdout) as { id: string; email: string }[];
  const tenant = (tenants.find((t) => t.email === "demo@example.com") ?? tenants[0])?.id as string;
  const made = npm(
    `admin -- key create --tenant ${tenant} --name "dev-origins check" --scopes services:write,paywalls:write,transactions:read`,
  );
  assert.equal(made.code, 0, made.stderr);
  const { key, id } = JSON.parse(made.stdout) as { key: string; id: string };
  return { tenant, key, id };
}

async function call(port: number, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`http://localhost:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as { data: Record<string, unknown> } };
}

/** Every file under .wrangler/state that holds any of `secrets` (as written: UTF-8 text). */
function filesHolding(secrets: string[]): string[] {
  if (!existsSync(STATE)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(STATE, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = readFileSync(path);
    for (const secret of secrets) if (bytes.includes(Buffer.from(secret))) found.push(`${path} holds ${secret.slice(0, 6)}…`);
  }
  return found;
}

/** The one-time sign-in link `npm run dev` printed, used by a cookie-keeping fetch; the services page's HTML. */
async function servicesPage(dev: Dev): Promise<string> {
  const link = [...dev.output().matchAll(/http:\/\/localhost:\d+\/dashboard\/sign-in\/link\?token=[0-9a-f]{64}/g)].at(-1)?.[0];
  assert.ok(link, "npm run dev printed a sign-in link");
  const base = `http://localhost:${dev.port}`;
  const signedIn = await fetch(`${base}/dashboard/sign-in/link`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: base, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: new URL(link).searchParams.get("token") as string }),
  });
  assert.equal(signedIn.status, 303);
  const cookie = (signedIn.headers.getSetCookie()[0] ?? "").split(";")[0] as string;
  return (await fetch(`${base}/dashboard/services`, { headers: { cookie } })).text();
}

test("npm run dev: two origins on one port; the API and the dashboard hand out payment URLs on 127.0.0.1", {
  timeout: 600_000,
}, async () => {
  const dev = await startDev([]);
  const { key, id } = keyOfDemoTenant();
  try {
    const api = `http://localhost:${dev.port}`;
    const pay = `http://127.0.0.1:${dev.port}`;
    assert.equal((await fetch(`${pay}/v1/health`)).status, 404, "the payment origin answers no API path");
    const service = await call(dev.port, key, "POST", "/v1/services", {
      name: `dev-origins ${Date.now()}`,
      baseUrl: "https://api.example.com",
      authMethod: "none",
      authConfig: {},
      networks: ["base-sepolia"],
      mode: "testnet",
    });
    assert.equal(service.status, 201, JSON.stringify(service.body));
    const paywall = await call(dev.port, key, "POST", "/v1/paywalls", {
      slug: `dev-origins-${Date.now()}`,
      name: "dev origins",
      targetType: "ROUTE",
      targetRoute: "/x",
      serviceId: service.body.data.id,
      price: "100",
      currency: "USDC",
      networks: ["base-sepolia"],
      fulfillmentMode: "PROXY",
    });
    assert.equal(paywall.status, 201, JSON.stringify(paywall.body));
    const x402 = (paywall.body.data.paymentUrls as { x402: string }).x402;
    assert.ok(x402.startsWith(`${pay}/api/x402/pay/`), x402);
    const challenge = await fetch(x402);
    assert.equal(challenge.status, 402, "the payment URL answers on the payment origin");
    assert.match(challenge.headers.get("content-security-policy") ?? "", /^sandbox;/);
    assert.equal((await fetch(x402.replace(pay, api))).status, 404, "and never on the API origin");
    assert.ok((await servicesPage(dev)).includes(x402), "the dashboard's services page shows the same URL");

    // Every dashboard-link call the documentation shows prints JSON alone on stdout.
    const calls = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => join("docs", f))]
      .flatMap((file) => readFileSync(join(ROOT, file), "utf8").split("\n"))
      .map((line) => /(npm run[^`#]*admin -- dashboard-link[^`#[]*)/.exec(line)?.[1]?.trim())
      .filter((call): call is string => call?.includes("--tenant") ?? false);
    assert.ok(calls.length > 0, "the documentation shows a dashboard-link call");
    const tenant = JSON.parse(npm("admin -- tenant list").stdout)[0].id as string;
    for (const call of new Set(calls)) {
      const run = spawnSync("bash", ["-c", call.replace("ten_…", tenant)], { cwd: ROOT, encoding: "utf8" });
      assert.equal(run.status, 0, `${call}: ${run.stderr}`);
      assert.match(JSON.parse(run.stdout).url, /\/dashboard\/sign-in\/link\?token=[0-9a-f]{64}$/, call);
    }

    // A raw key in a probe's query string is refused, and kept nowhere.
    assert.equal((await fetch(`${api}/v1/me?api_key=${key}`)).status, 400);
    await sleep(2000);
    assert.deepEqual(filesHolding([key]), []);
  } finally {
    npm(`admin -- key delete ${id}`);
    await dev.stop();
  }
});

test("npm run dev -- --payments: sign-up open, npm run buy pays, a query-param credential and a probed key stay out of .wrangler/state", {
  timeout: 900_000,
}, async () => {
  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const dev = await startDev(["--payments"], { LOCALNET_PORTS: ports.join(",") });
  const { key, id } = keyOfDemoTenant();
  const secret = `qp_${randomBytes(16).toString("hex")}`;
  try {
    const pay = `http://127.0.0.1:${dev.port}`;
    const info = JSON.parse(readFileSync(join(ROOT, ".wrangler", "dev-payments.json"), "utf8")) as {
      paymentUrl: string;
      upstreamUrl: string;
    };
    assert.ok(info.paymentUrl.startsWith(`${pay}/api/x402/pay/`), info.paymentUrl);
    assert.ok(dev.output().includes(`demo paywall ${pay}/api/x402/pay/`));
    const bought = npm("buy");
    assert.equal(bought.code, 0, bought.stdout + bought.stderr);
    assert.match(bought.stdout, /HTTP 200/);

    // Sign-up is open: a wallet of no tenant gets a SIWE message to sign.
    const base = `http://localhost:${dev.port}`;
    const siwe = await fetch(`${base}/dashboard/sign-in/siwe/message`, {
      method: "POST",
      headers: { origin: base, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ address: `0x${randomBytes(20).toString("hex")}`, chainId: "84532" }),
    });
    assert.equal(siwe.status, 200, await siwe.clone().text());

    // A paid call whose service sends its credential as a query parameter.
    const prefix = `/cli-${randomBytes(6).toString("hex")}`;
    const service = await call(dev.port, key, "POST", "/v1/services", {
      name: `query-param ${prefix}`,
      baseUrl: `https://upstream.gateway.test${prefix}`,
      authMethod: "query-param",
      authConfig: { paramName: "api_token", paramValue: secret },
      networks: ["base-sepolia"],
      mode: "testnet",
    });
    assert.equal(service.status, 201, JSON.stringify(service.body));
    const paywall = await call(dev.port, key, "POST", "/v1/paywalls", {
      slug: prefix.slice(1),
      name: "query-param",
      targetType: "ROUTE",
      targetRoute: "/text/ok",
      serviceId: service.body.data.id,
      price: "100",
      currency: "USDC",
      networks: ["base-sepolia"],
      fulfillmentMode: "PROXY",
    });
    assert.equal(paywall.status, 201, JSON.stringify(paywall.body));
    const paid = npm(`buy -- ${(paywall.body.data.paymentUrls as { x402: string }).x402}`);
    assert.equal(paid.code, 0, paid.stdout + paid.stderr);
    const received = (await (await fetch(`${info.upstreamUrl}/__upstream/requests?prefix=${prefix}`)).json()) as {
      query: string;
    }[];
    assert.deepEqual(
      received.map((r) => r.query),
      [`api_token=${secret}`],
      "the credential went out, in the URL",
    );
    assert.equal((await fetch(`${base}/v1/me?api_key=${key}`)).status, 400);
    await sleep(2000);
    assert.deepEqual(filesHolding([secret, key]), []);
    assert.ok(!dev.output().includes(secret), "nor in the dev server's output");
    await call(dev.port, key, "DELETE", `/v1/services/${service.body.data.id}`);
  } finally {
    npm(`admin -- key delete ${id}`);
    await dev.stop();
  }
});
