/**
 * `npm run dev -- --payments`: the Worker with the whole local payment loop around it.
 *
 * 1. The local stack on fixed ports: chain (anvil, chain id 84532 = base-sepolia) with the USDC stand-in, the x402
 *    facilitator, a demo upstream, and a Tempo chain for MPP (LOCALNET_PORTS, default 9461-9464).
 * 2. The Worker through wrangler's `unstable_startWorker` (same wrangler.toml, same local D1 state as `wrangler dev`)
 *    with Miniflare's outbound service: its fetches to `https://upstream.gateway.test`,
 *    `https://facilitator.gateway.test` and `https://rpc.gateway.test` reach the local processes; every other host
 *    goes to the network as usual (a tenant's own upstream on this machine included). The demo needs no SSRF
 *    exception: the Worker sees public-looking `.test` URLs for it. Vars for this run only (never written to
 *    wrangler.toml or .dev.vars): `NETWORK_OVERRIDES` (base-sepolia → the local token), `FACILITATOR_URL_TESTNET`,
 *    `PAYMENT_BASE_URL`, and the dev-only `WEBHOOKS_ALLOW_LOOPBACK` and `UPSTREAMS_ALLOW_LOOPBACK`.
 * 3. The demo tenant gets a demo service ("Local payment demo", `https://upstream.gateway.test`, bearer credential)
 *    and a paywall `local-demo` (0.01 USDC on base-sepolia and, with the Tempo chain, tempo-testnet; paid to the
 *    tenant's wallets), created through the management API itself with a key that exists only for those calls
 *    (`createDevSetupKey`: named and recorded as made by `npm run dev`, so the tenant's Activity says so).
 * 4. It prints the ready commands, `npm run buy` (x402), `npm run buy -- --mpp` (MPP) and `npm run buy -- --session 100`
 *    (an x402 session: one deposit, many calls), which pay that paywall
 *    with funded local buyers (src/cli/localnet/buy.ts reads .wrangler/dev-payments.json).
 *
 * Ctrl-C stops the Worker, then the chain, facilitator and upstream: nothing is left running.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createDevSetupKey, DEMO_TENANT, listAllTenants, removeDevSetupKey } from "../../admin/commands.ts";
import { getDb } from "../../db/client.ts";
import { runCronsOnSchedule, scheduledOverHttp, wranglerCrons } from "../dev-crons.ts";
import { LOCAL_PERSIST_PATH, openD1, PROJECT_ROOT, WRANGLER_CONFIG } from "../platform.ts";
import { createOutboundRouter, GATEWAY_TEST_HOSTS, outboundService } from "./outbound.ts";
import { startStack } from "./stack.ts";

export const DEV_PAYMENTS_FILE = join(PROJECT_ROOT, ".wrangler", "dev-payments.json");
const DEV_VARS = join(PROJECT_ROOT, ".dev.vars");
const DEMO_SERVICE_NAME = "Local payment demo";
const DEMO_SLUG = "local-demo";
const DEMO_PRICE = "10000"; // 0.01 USDC

/** What `npm run buy` needs (written to .wrangler/dev-payments.json while the loop runs). */
export interface DevPaymentsInfo {
  paymentUrl: string;
  price: string;
  merchantWallet: string;
  network: string;
  rpcUrl: string;
  usdc: string;
  buyerPrivateKey: string;
  upstreamUrl: string;
  apiBase: string;
  /** MPP on the local Tempo chain (absent without it): one buyer key per payment (see tempo.ts). */
  mpp?: { paymentUrl: string; rpcUrl: string; chainId: number; currency: string; buyerPrivateKeys: string[] };
}

const say = (text: string) => process.stdout.write(`${text}\n`);

function parsePorts(): [number, number, number, number] {
  const raw = process.env.LOCALNET_PORTS ?? "9461,9462,9463,9464";
  const ports = raw.split(",").map((p) => Number.parseInt(p, 10));
  if (ports.length !== 4 || ports.some((p) => !Number.isInteger(p) || p <= 0 || p > 65535)) {
    throw new Error(`LOCALNET_PORTS must be four ports (chain,facilitator,upstream,tempo chain), got ${raw}`);
  }
  return ports as [number, number, number, number];
}

/** The Worker's vars for this run: .dev.vars (ENCRYPTION_KEY) plus the local facilitator and base URL. */
function writeRunVars(port: number): string {
  const base = (() => {
    try {
      return readFileSync(DEV_VARS, "utf8");
    } catch {
      return "";
    }
  })();
  const file = join(PROJECT_ROOT, ".wrangler", "dev-payments.vars");
  mkdirSync(join(PROJECT_ROOT, ".wrangler"), { recursive: true });
  const extra = {
    FACILITATOR_URL_TESTNET: `https://${GATEWAY_TEST_HOSTS.facilitator}`,
    // The payment origin: the other loopback name on the same port (the API and dashboard answer on `localhost`).
    PAYMENT_BASE_URL: `http://127.0.0.1:${port}`,
    // As under plain `npm run dev`: a wallet of no tenant may sign up in the dashboard.
    DASHBOARD_SIGNUP: "open",
  };
  const lines = Object.entries(extra).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  writeFileSync(file, `${base}${base.endsWith("\n") || base === "" ? "" : "\n"}${lines.join("\n")}\n`, { mode: 0o600 });
  return file;
}

async function api<T>(base: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json().catch(() => ({}))) as { data?: unknown; error?: string };
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${json.error ?? JSON.stringify(json)}`);
  return json.data as T;
}

/** Creates (once) the demo service and paywall through the management API; returns the paywall's payment URLs. */
async function ensureDemoPaywall(
  apiBase: string,
  withTempo: boolean,
): Promise<{ paymentUrl: string; mppUrl: string; merchantWallet: string }> {
  const handle = await openD1({ remote: false });
  let keyId: string | undefined;
  let key: string;
  try {
    const db = getDb(handle.db);
    const tenants = await listAllTenants(db);
    const tenant = tenants.find((t) => t.email === DEMO_TENANT.email) ?? tenants[0];
    if (!tenant) throw new Error("the local database has no tenant");
    // Labelled as the dev runner's own on the tenant's Activity page; one left by an interrupted run goes first.
    const created = await createDevSetupKey({ db, cache: handle.keyCache }, tenant.id);
    keyId = created.id;
    key = created.key;
  } finally {
    await handle.dispose();
  }
  try {
    interface Service {
      id: string;
      name: string;
    }
    interface Paywall {
      id: string;
      slug: string;
      serviceId: string;
      merchantWallet: string;
      networks: string[];
      sessions: { enabled: boolean };
      paymentUrls: { x402: string | null; mpp: string | null };
    }
    const networks = withTempo ? ["base-sepolia", "tempo-testnet"] : ["base-sepolia"];
    const services = await api<Service[]>(apiBase, key, "GET", "/v1/services?limit=100");
    const service =
      services.find((s) => s.name === DEMO_SERVICE_NAME) ??
      (await api<Service>(apiBase, key, "POST", "/v1/services", {
        name: DEMO_SERVICE_NAME,
        description: "A local upstream for the payment loop of npm run dev -- --payments",
        baseUrl: `https://${GATEWAY_TEST_HOSTS.upstream}`,
        authMethod: "bearer",
        authConfig: { bearerToken: "demo-upstream-credential" },
        networks: ["base-sepolia", "tempo-testnet"],
        mode: "testnet",
      }));
    const paywalls = await api<Paywall[]>(apiBase, key, "GET", "/v1/paywalls?limit=100");
    const paywall =
      paywalls.find((p) => p.slug === DEMO_SLUG && p.serviceId === service.id) ??
      (await api<Paywall>(apiBase, key, "POST", "/v1/paywalls", {
        slug: DEMO_SLUG,
        name: "Local demo",
        description: "0.01 USDC per call, paid on the local chain",
        serviceId: service.id,
        targetType: "ROUTE",
        targetRoute: "/demo/text/Hello%20from%20the%20demo%20upstream%2C%20paid%20through%20the%20gateway.",
        price: DEMO_PRICE,
        currency: "USDC",
        networks,
        fulfillmentMode: "PROXY",
        allowedMethods: ["GET", "POST"],
        // `npm run buy -- --session N` opens a session on it (docs/sessions.md).
        sessions: { enabled: true },
      }));
    // A demo paywall from an earlier run without the Tempo network, or without sessions, gets them.
    const missing = {
      ...(withTempo && !paywall.networks.includes("tempo-testnet") ? { networks } : {}),
      ...(paywall.sessions?.enabled ? {} : { sessions: { enabled: true } }),
    };
    const current =
      Object.keys(missing).length > 0
        ? await api<Paywall>(apiBase, key, "PATCH", `/v1/paywalls/${paywall.id}`, missing)
        : paywall;
    // The payment URLs as the API hands them out: on the payment origin (PAYMENT_BASE_URL), never the API's.
    return {
      paymentUrl: current.paymentUrls.x402 ?? "",
      mppUrl: current.paymentUrls.mpp ?? "",
      merchantWallet: current.merchantWallet,
    };
  } finally {
    const cleanup = await openD1({ remote: false });
    try {
      if (keyId) await removeDevSetupKey({ db: getDb(cleanup.db), cache: cleanup.keyCache }, keyId);
    } finally {
      await cleanup.dispose();
    }
  }
}

/** Runs until SIGINT/SIGTERM. `port`: the Worker's port; `readyBlock`: what `npm run dev` prints last once ready. */
export async function runDevPaymentLoop(port: number, readyBlock: string[] = []): Promise<void> {
  const [chainPort, facilitatorPort, upstreamPort, tempoPort] = parsePorts();
  const stack = await startStack({ port: chainPort, facilitatorPort, upstreamPort, tempoPort });
  let worker: Awaited<ReturnType<typeof import("wrangler").unstable_startWorker>> | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    rmSync(DEV_PAYMENTS_FILE, { force: true });
    rmSync(join(PROJECT_ROOT, ".wrangler", "dev-payments.vars"), { force: true });
    await worker?.dispose().catch(() => {});
    await stack.stop();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(130));
  process.on("SIGTERM", () => void stop(143));
  try {
    const { unstable_startWorker } = await import("wrangler");
    const route = createOutboundRouter(
      {
        [GATEWAY_TEST_HOSTS.upstream]: stack.upstream.url,
        [GATEWAY_TEST_HOSTS.facilitator]: stack.facilitator.url,
        [GATEWAY_TEST_HOSTS.rpc]: stack.localnet.rpcUrl,
        ...(stack.tempo ? { [GATEWAY_TEST_HOSTS.tempoRpc]: stack.tempo.rpcUrl } : {}),
      },
      { passThrough: true },
    );
    worker = await unstable_startWorker({
      config: WRANGLER_CONFIG,
      envFiles: [writeRunVars(port)],
      // A var wrangler.toml does not declare (an env file only overrides declared vars and secrets).
      // WEBHOOKS_ALLOW_LOOPBACK: webhook endpoints on this machine (`npm run webhooks:listen`), for this run only;
      // UPSTREAMS_ALLOW_LOOPBACK: services of the tenant's own whose upstream is a server on this machine.
      bindings: {
        NETWORK_OVERRIDES: { type: "plain_text", value: stack.info.networkOverrides },
        WEBHOOKS_ALLOW_LOOPBACK: { type: "plain_text", value: "on" },
        UPSTREAMS_ALLOW_LOOPBACK: { type: "plain_text", value: "on" },
        // As under plain `npm run dev`: sessions settled every 10 s, an unused channel refunded after 2 minutes.
        SESSION_SETTLE_INTERVAL_SECONDS: { type: "plain_text", value: "10" },
        SESSION_IDLE_REFUND_SECONDS: { type: "plain_text", value: "120" },
      },
      dev: {
        server: { hostname: "localhost", port },
        // wrangler adds "v3": the same state as `wrangler dev` (LOCAL_PERSIST_PATH).
        persist: dirname(LOCAL_PERSIST_PATH),
        inspector: false,
        watch: true,
        outboundService: outboundService(route),
      },
    } as never);
    await Promise.race([
      worker.ready,
      new Promise((_, fail) =>
        setTimeout(() => fail(new Error("the Worker did not start within 180 s (see its output above)")), 180_000),
      ),
    ]);
    // wrangler.toml's Cron Triggers on their schedule (the payment sweep, the cleanup), as deployed.
    // Through the local runtime's own route, as without --payments: the dev server's `scheduled()` looks the Worker up
    // by a name its runtime does not give it ("worker not found").
    runCronsOnSchedule(await wranglerCrons(), (cron, at) => scheduledOverHttp(String(port), cron, at));
    const apiBase = `http://localhost:${port}`;
    const { mppUrl, ...demo } = await ensureDemoPaywall(apiBase, stack.info.tempo !== undefined);
    const tempo = stack.info.tempo;
    const info: DevPaymentsInfo = {
      ...demo,
      ...(tempo
        ? {
            mpp: {
              paymentUrl: mppUrl,
              rpcUrl: tempo.rpcUrl,
              chainId: tempo.chainId,
              currency: tempo.currency,
              buyerPrivateKeys: tempo.buyers.map((b) => b.privateKey),
            },
          }
        : {}),
      price: DEMO_PRICE,
      network: stack.info.network,
      rpcUrl: stack.info.rpcUrl,
      usdc: stack.info.usdc.address,
      buyerPrivateKey: stack.info.buyer.privateKey,
      upstreamUrl: stack.info.upstreamUrl,
      apiBase,
    };
    writeFileSync(DEV_PAYMENTS_FILE, JSON.stringify(info, null, 2), { mode: 0o600 });
    say("");
    say("=".repeat(100));
    say("LOCAL PAYMENT LOOP (development only; the keys below are anvil's public dev keys, never real secrets)");
    say(
      `  chain       ${stack.info.rpcUrl}  (chain id ${stack.info.chainId}, base-sepolia)  USDC stand-in ${stack.info.usdc.address}`,
    );
    say(`  facilitator ${stack.info.facilitatorUrl}  (the Worker reaches it as https://${GATEWAY_TEST_HOSTS.facilitator})`);
    say(`  upstream    ${stack.info.upstreamUrl}  (the Worker reaches it as https://${GATEWAY_TEST_HOSTS.upstream})`);
    if (tempo) say(`  tempo chain ${tempo.rpcUrl}  (chain id ${tempo.chainId}, tempo-testnet)`);
    say(`  Worker      ${apiBase}  with NETWORK_OVERRIDES for base-sepolia and FACILITATOR_URL_TESTNET for this run only`);
    say(`  demo paywall ${demo.paymentUrl}  (0.01 USDC to ${demo.merchantWallet})`);
    say("");
    say("Buy from it with a funded local buyer (in another terminal):");
    say("  npm run buy             (x402 on the local chain)");
    if (tempo) say("  npm run buy -- --mpp    (MPP on the local Tempo chain)");
    say("  npm run buy -- --session 100   (100 calls on one deposit: an x402 session, settled within 30 s, then refunded)");
    say("=".repeat(100));
    say("");
    if (readyBlock.length > 0) say(readyBlock.join("\n"));
  } catch (err) {
    process.stderr.write(`npm run dev -- --payments: ${(err as Error).message}\n`);
    await stop(1);
  }
  await new Promise(() => {});
}
