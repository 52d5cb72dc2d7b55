// The benchmark's scenarios and targets, as data. Adding a scenario is one entry in SCENARIOS (plus, if it needs data,
// a seed function); a scenario whose endpoint answers 404 is skipped ("skipped: endpoint missing").

import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { buildChannelConfig, createBatchSettlementEIP3009DepositPayload, signVoucher } from "@x402/evm/batch-settlement/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hashApiKey } from "../../src/core/keys/api-key.ts";
import { outcomeEventIdOf } from "../../src/core/ledger/ids.ts";
import { completePayment, startPayment } from "../../src/core/ledger/ledger.ts";
import { networksMatching } from "../../src/core/money/tokens.ts";
import { parseKeyRing } from "../../src/core/secrets/secret-box.ts";
import { sealHeaders } from "../../src/core/secrets/secret-fields.ts";
import { SESSION_COOKIE, SESSION_MAX_MS } from "../../src/dashboard/session.ts";
import { findKeyWithTenantByHash } from "../../src/db/api-keys.ts";
import type { Db } from "../../src/db/client.ts";
import { findCacheTotals, findDailyRevenue, findDailyTraffic } from "../../src/db/daily-stats.ts";
import { insertSession } from "../../src/db/dashboard.ts";
import { findEventsPage } from "../../src/db/events.ts";
import type { NewPaywall } from "../../src/db/paywalls.ts";
import {
  deletePaywallRow,
  findPaywall,
  findPaywallsPage,
  insertPaywallWithinCap,
  listPaywallNames,
} from "../../src/db/paywalls.ts";
import { findService, findServicesPage, listServiceNames } from "../../src/db/services.ts";
import { findTransactionsPage } from "../../src/db/transactions.ts";
import { newId, randomHex, sha256Hex } from "../../src/lib/ids.ts";
import { lastUtcDays } from "../../src/lib/utc-days.ts";
import { COOKIE_KEY } from "./load.ts";
import { type ApiResponse, type BenchContext, cloneSeries, inPool } from "./seed.ts";
import { STAND_IN_HOSTS } from "./stand-ins.ts";
import {
  MCP_PAID,
  MCP_TOOLS_LIST,
  MPP_CHALLENGE,
  X402_CACHED,
  X402_CHALLENGE,
  X402_ONE_TENANT,
  X402_PAID,
  X402_PEER,
  X402_RESEND,
  X402_SESSION,
  X402_TENANTS,
} from "./targets.ts";
import { BENCH_CAPS, BENCH_ENCRYPTION_KEY, type WorkerName } from "./workers.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Variables one request sequence passes between its steps (e.g. the id a POST returned, for the DELETE). Each sequence
 * starts with `seq`, a number unique over the whole run (for unique slugs or names in bodies).
 */
export type Vars = Record<string, string>;

export interface Step {
  method: Method;
  path: string | ((vars: Vars) => string | undefined);
  /** JSON body (a string is sent as is); a function builds it per request from the sequence's vars. */
  body?: unknown | ((vars: Vars) => unknown);
  /** Reads the response (status, body) into `vars` for the next steps of the same sequence. */
  capture?: (status: number, body: string, vars: Vars) => void;
  /** Request headers built per request (e.g. a fresh payment); the key's header is added to them. */
  headers?: (vars: Vars) => Record<string, string>;
  /**
   * Whether a 2xx answer's body is the one due (a JSON-RPC result, a settled tool call: MCP answers its refusals with a
   * 200 too). One that is not counts as an unexpected status (`<status> refused`).
   */
  answered?: (body: string) => boolean;
}

/** What a seed returns: the keys to rotate across request sequences, and optionally the steps of one sequence. */
export interface Seeded {
  keys: string[];
  steps?: Step[];
  /** The tenant the keys belong to, when they all belong to one, and its service if it has one (for `explain`). */
  tenantId?: string;
  serviceId?: string;
  /** The request path, when it names seeded ids (a scenario with `pathFromSeed`). */
  path?: string;
  /**
   * Tags each measured request (the payment nonce of the paid scenario): the load records when each tagged request was
   * sent and answered, joined afterwards with the stand-ins' log (stand-ins.ts `overhead`).
   */
  tagOf?: (vars: Vars) => string;
}

export interface Scenario {
  name: string;
  /** Which worker takes the load: the app, or a reference fixture. */
  target: Extract<WorkerName, "app" | "ceiling" | "floor" | "peer">;
  method: Method;
  path: string;
  body?: unknown;
  /** Counts toward "p99 of every read scenario ≤ 3× the storage floor's p99". */
  read: boolean;
  /** HTTP statuses this scenario expects (default: 200); any other status counts as unexpected. */
  expect?: number[];
  connections?: number;
  /** Seconds of measured load (a warm-up precedes it). */
  duration?: number;
  /** Creates the scenario's data; gets the shared context (10 tenants × 20 keys already seeded). No seed: no key. */
  seed?: (ctx: BenchContext) => Promise<Seeded>;
  /**
   * Calls the app's db function(s) the handler calls, with the handler's arguments: the runner records the statements
   * and prints their EXPLAIN QUERY PLAN and D1's rows read over the seeded database (explain.ts).
   */
  explain?: (db: Db, seeded: Seeded) => Promise<unknown>;
  /**
   * Name of an earlier scenario (already seeded) measured again in slices interleaved with this one's, so the two are
   * compared on the same machine state (the scale pair: the target uses these paired figures).
   */
  compareWith?: string;
  /**
   * The `path` shown is a template (`/api/x402/pay/{serviceId}/{slug}`): the seed returns the real one (`Seeded.path`,
   * or its steps), and the probe runs after seeding.
   */
  pathFromSeed?: boolean;
  /** The reference measured in slices alongside this scenario (default: "ref: storage floor"). */
  floor?: string;
  /** A reference that is only measured alongside the scenarios naming it as `floor`, never on its own. */
  pairOnly?: boolean;
  /** `payment`: an app scenario on the payment origin (the gateway's URLs), not the API origin. */
  origin?: "payment";
  /** Each connection sends from a client address of its own (`CF-Connecting-IP`; load.ts `clientAddress`). */
  ownAddress?: boolean;
  /** Its load must not reach the stand-in facilitator or upstream: the runner counts their calls during it. */
  noStandIns?: boolean;
  /** Its load must not reach the stand-in upstream (the facilitator is called): the runner counts upstream calls. */
  noUpstream?: boolean;
  /** Its load must not reach the stand-in facilitator (the upstream is called): the runner counts facilitator calls. */
  noFacilitator?: boolean;
}

/**
 * An app scenario's `duration` is split into `rounds` slices, each followed by a slice of the storage floor
 * (`floorShare` of its length): the floor is measured alongside, on the same machine state, and the ratios use it.
 * Each slice ends with a drain (load.ts), as long as the slowest answers in flight (≈ 1 s for the 100,000-row lists
 * under 32 connections). 3 s in 2 slices and a 0.5 s warm-up keep the 12 measured rows (≈ 6–9 s each with probe,
 * prime, warm-up, paired slices, drains, accounting and explain; 12 s for the scale row and its companion slices), the
 * build and ≈ 10 s of seeding within ≈ 100–120 s on the shared 2-core machine: a margin under the 170 s budget for a
 * machine twice as loaded. `alone`: seconds of the one-request-at-a-time pass of the paid scenario (its phases without
 * queueing).
 */
export const DEFAULTS = { connections: 32, duration: 3, warmup: 0.5, rounds: 2, floorShare: 0.5, alone: 1 };

const manyKeys = async (ctx: BenchContext): Promise<Seeded> => ({ keys: ctx.keys });
const hotKey = async (ctx: BenchContext): Promise<Seeded> => ({ keys: ctx.keys.slice(0, 1) });

// ---- Seeds of the data scenarios (README.md, "Scenarios and their data") ----

const NETWORKS = ["base-sepolia", "tempo-testnet"];

/** A service as a client would create it: bearer credentials (encrypted at rest), two testnet networks. */
const serviceBody = (i: number) => ({
  name: `Bench service ${i}`,
  description: "Seeded by the benchmark",
  baseUrl: `https://api${i}.bench.example.com`,
  authMethod: "bearer",
  authConfig: { bearerToken: `sk_bench_${i}_upstream_credential` },
  networks: NETWORKS,
  mode: "testnet",
  categories: ["bench"],
  publicRoutes: ["/health"],
});

/** A ROUTE paywall of `serviceId` with one upstream header (encrypted at rest). */
const paywallBody = (serviceId: string, slug: string) => ({
  slug,
  name: `Paywall ${slug}`,
  targetType: "ROUTE",
  targetRoute: `/v1/${slug}/items`, // a template like `{id}` is not a valid route (URL path characters only)
  serviceId,
  price: "10000",
  currency: "USDC",
  networks: NETWORKS,
  fulfillmentMode: "PROXY",
  allowedMethods: ["GET", "POST"],
  headers: [{ key: "X-Upstream-Token", value: `upstream-${slug}` }],
});

const PAYWALL_CAP = Number(BENCH_CAPS.MAX_PAYWALLS_PER_TENANT);
const ring = parseKeyRing(BENCH_ENCRYPTION_KEY);

/** The row `createPaywall` (routes/paywalls/handlers.ts) stores for `paywallBody(serviceId, slug)`: headers sealed. */
async function paywallRow(tenant: { id: string; walletAddress: string }, serviceId: string, slug: string): Promise<NewPaywall> {
  const body = paywallBody(serviceId, slug);
  const id = newId("pw");
  const now = new Date();
  return {
    id,
    tenantId: tenant.id,
    serviceId,
    slug,
    name: body.name,
    description: null,
    targetType: "ROUTE",
    targetUrl: null,
    targetRoute: body.targetRoute,
    price: body.price,
    currency: "USDC",
    networks: body.networks,
    merchantWallet: tenant.walletAddress,
    timeout: 60_000,
    allowedMethods: body.allowedMethods,
    allowedHeaders: [],
    fulfillmentMode: "PROXY",
    enabled: true,
    headers: await sealHeaders(ring, { tenantId: tenant.id, paywallId: id }, body.headers),
    queryParams: null,
    cacheRules: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The id of what a POST created (201), or an error with the answer. */
function createdId(res: ApiResponse, what: string): string {
  const id = (res.json as { data?: { id?: unknown } } | undefined)?.data?.id;
  if (res.status !== 201 || typeof id !== "string") throw new Error(`seeding ${what}: ${res.status} ${res.body.slice(0, 300)}`);
  return id;
}

const createService = async (ctx: BenchContext, key: string, i: number) =>
  createdId(await ctx.api("POST", "/v1/services", key, serviceBody(i)), "a service");
const createPaywall = async (ctx: BenchContext, key: string, serviceId: string, slug: string) =>
  createdId(await ctx.api("POST", "/v1/paywalls", key, paywallBody(serviceId, slug)), "a paywall");

/**
 * The services tenant: 100 services × 10 paywalls. The services through the API (validation, authConfig encryption, cap
 * check); the paywalls through the db function the POST handler calls (`insertPaywallWithinCap`, cap check included)
 * with the row the handler builds (headers sealed with the app's code): through the API, the 1,000 paywalls took
 * ≈ 9 s of the 3-minute budget on the shared 2-core machine; this way ≈ 1.5–3.5 s (the services' 100 POSTs included).
 */
const servicesTenant = (ctx: BenchContext) =>
  ctx.once("services tenant", async (): Promise<Seeded> => {
    const { tenant, keys } = await ctx.newTenant({ keys: 20 });
    const services: string[] = [];
    await inPool(100, 8, async (i) => {
      services[i] = await createService(ctx, keys[i % keys.length]!, i);
    });
    ctx.log("100 services through the API");
    // Paywall j: service j % 100, slug p<j / 100>: 10 per service, one service after the other. 100 at a time: the
    // seeding client sends each turn's batches as one (seed.ts coalesceBatches), ≈ 10 round trips in all.
    await inPool(1_000, 100, async (j) => {
      const row = await paywallRow(tenant, services[j % 100]!, `p${Math.floor(j / 100)}`);
      const outcome = await insertPaywallWithinCap(ctx.db, row, PAYWALL_CAP, "testnet");
      if ("refused" in outcome) throw new Error(`seeding a paywall: refused (${outcome.refused})`);
    });
    ctx.log("1,000 paywalls through insertPaywallWithinCap");
    return { keys, tenantId: tenant.id };
  });

/** Clone ids look like the app's (`pw_` + 24 hex): a random 6-hex tag per tenant, then the row number. */
const cloneId = (prefix: string) => `'${prefix}_' || ?5 || printf('%018x', n)`;

/**
 * The history tenant: one paywall through the API, one event and one transaction through the ingestion code (the
 * gateway's write path), then each cloned in SQL to 100,000 rows, one second apart, with varied categorical columns.
 */
const historyTenant = (ctx: BenchContext) => historySeries(ctx, 100_000, "history tenant");

/** A history tenant with `count` events and `count` transactions (the roll-up triggers of migrations/0005 run on each). */
const historySeries = (ctx: BenchContext, count: number, name = `history tenant ${count}`) =>
  ctx.once(name, async (): Promise<Seeded> => {
    const { tenant, keys } = await ctx.newTenant({ keys: 20 });
    const serviceId = await createService(ctx, keys[0]!, 0);
    const paywallId = await createPaywall(ctx, keys[0]!, serviceId, "history");
    const tag = randomHex(3);
    // One payment through the ledger (PENDING + REQUEST, then COMPLETED + SUCCESS): its rows are the templates.
    const ref = {
      transactionId: `txn_x402_${tag}_template`,
      tenantId: tenant.id,
      paywallId,
      serviceId,
      protocol: "x402",
      network: "base-sepolia",
      amount: "10000",
    } as const;
    await startPayment(ctx.db, {
      ...ref,
      currency: "USDC",
      payer: `0x${randomHex(20)}`,
      method: "GET",
      pending: {
        reference: `0x${randomHex(32)}`,
        validBefore: new Date(),
        asset: `0x${randomHex(20)}`,
        payTo: `0x${randomHex(20)}`,
      },
    });
    await completePayment(ctx.db, ref, `0x${randomHex(32)}`, { statusCode: 200, responseTime: 120 });
    const start = Date.now() - (count + 1) * 1000; // ?4: the clones are older than the templates
    await cloneSeries(
      ctx.d1,
      "events",
      outcomeEventIdOf(ref.transactionId),
      count - 1,
      {
        id: cloneId("evt"),
        event_type: "CASE n % 3 WHEN 0 THEN 'REQUEST' WHEN 1 THEN 'SUCCESS' ELSE 'ERROR' END",
        status_code: "CASE n % 3 WHEN 0 THEN NULL WHEN 1 THEN 200 ELSE 502 END",
        response_time: "CASE n % 3 WHEN 0 THEN NULL ELSE 40 + n % 900 END",
        amount: 'CASE n % 3 WHEN 1 THEN tpl."amount" ELSE NULL END',
        created_at: "?4 + n * 1000",
      },
      [start, tag],
    );
    await cloneSeries(
      ctx.d1,
      "transactions",
      ref.transactionId,
      count - 1,
      {
        id: cloneId("txn"),
        // 10% FAILED, 10% PENDING, 80% COMPLETED; odd rows on tempo-testnet, a quarter of the rows over mpp (tempo only).
        status: "CASE n % 10 WHEN 0 THEN 'FAILED' WHEN 1 THEN 'PENDING' ELSE 'COMPLETED' END",
        network: "CASE n % 2 WHEN 0 THEN 'base-sepolia' ELSE 'tempo-testnet' END",
        protocol: "CASE n % 4 WHEN 1 THEN 'mpp' ELSE 'x402' END",
        payer_address: "'0x' || printf('%040x', n % 5000)",
        tx_hash: "CASE WHEN n % 10 >= 2 THEN '0x' || printf('%064x', n) ELSE NULL END",
        failure_reason: "CASE n % 10 WHEN 0 THEN 'insufficient funds' ELSE NULL END",
        created_at: "?4 + n * 1000",
        settled_at: "CASE n % 10 WHEN 1 THEN NULL ELSE ?4 + n * 1000 + 500 END",
      },
      [start, tag],
    );
    return { keys, tenantId: tenant.id };
  });

/** A tenant with `count` paywalls: a service and a template paywall through the API, then `count - 1` SQL clones. */
const paywallTenant = (count: number) => (ctx: BenchContext) =>
  ctx.once(`paywall tenant ${count}`, async (): Promise<Seeded> => {
    const { tenant, keys } = await ctx.newTenant({ keys: 20 });
    const serviceId = await createService(ctx, keys[0]!, 0);
    const template = await createPaywall(ctx, keys[0]!, serviceId, "template");
    await cloneSeries(
      ctx.d1,
      "paywalls",
      template,
      count - 1,
      {
        id: cloneId("pw"),
        slug: "'bench-' || n", // paywalls_service_slug_unique
        name: "'Paywall ' || n",
        target_route: "'/v1/bench-' || n || '/items'",
        created_at: "?4 + n",
        updated_at: "?4 + n",
      },
      [Date.now() - count - 1, randomHex(3)],
    );
    return { keys, tenantId: tenant.id };
  });

/**
 * The earnings page of a history tenant (1,000 or the 100,000 of "history tenant"), signed in: a dashboard session as
 * sign-in starts one (the cookie's random id, its SHA-256 stored), sent as the Cookie header (load.ts COOKIE_KEY).
 */
const earningsOf =
  (count: number) =>
  async (ctx: BenchContext): Promise<Seeded> => {
    const history = count === 100_000 ? await historyTenant(ctx) : await historySeries(ctx, count);
    const tenantId = tenantOf(history);
    const id = randomHex(32);
    const now = new Date();
    await insertSession(ctx.db, {
      id: await sha256Hex(id),
      tenantId,
      signupWallet: null,
      now,
      expiresAt: new Date(now.getTime() + SESSION_MAX_MS),
      ip: null,
      userAgent: null,
      signedInWith: "link",
    });
    return { keys: [`${COOKIE_KEY}${SESSION_COOKIE}=${id}`], tenantId };
  };

/** The write path: a fresh tenant and service; each sequence creates a paywall (201) and deletes it (200). */
const writePath = async (ctx: BenchContext): Promise<Seeded> => {
  const { tenant, keys } = await ctx.newTenant({ keys: 20 });
  const serviceId = await createService(ctx, keys[0]!, 0);
  return {
    keys,
    tenantId: tenant.id,
    serviceId,
    steps: [
      {
        method: "POST",
        path: "/v1/paywalls",
        body: (vars: Vars) => paywallBody(serviceId, `w-${vars.seq}`),
        capture: (status, body, vars) => {
          if (status === 201) vars.id = (JSON.parse(body) as { data: { id: string } }).data.id;
        },
      },
      { method: "DELETE", path: (vars) => (vars.id ? `/v1/paywalls/${vars.id}` : undefined) },
    ],
  };
};

// ---- The payment gateway's buyer-facing URLs ----

/**
 * The gateway tenant: one service whose upstream is the stand-in (`https://upstream.gateway.test`, bearer credentials
 * encrypted at rest) and one ROUTE paywall on it (base-sepolia for x402, tempo-testnet for MPP, one encrypted
 * header), both through the API. No API key is used by the buyer-facing scenarios: buyers are anonymous.
 */
const gatewayTenant = (ctx: BenchContext) =>
  ctx.once("gateway tenant", async () => {
    const { tenant, keys } = await ctx.newTenant({ keys: 1 });
    const body = { ...serviceBody(0), baseUrl: `https://${STAND_IN_HOSTS.upstream}` };
    const serviceId = createdId(await ctx.api("POST", "/v1/services", keys[0]!, body), "the gateway service");
    await createPaywall(ctx, keys[0]!, serviceId, "quote");
    const cached = { ...paywallBody(serviceId, CACHED_SLUG), cacheRules: { ttlSeconds: 3600, varyQuery: [] } };
    createdId(await ctx.api("POST", "/v1/paywalls", keys[0]!, cached), "the cached paywall");
    return { tenantId: tenant.id, serviceId, slug: "quote", key: keys[0]! };
  });

/** The gateway tenant's paywall whose answers are cached. */
const CACHED_SLUG = "quote-cached";

const payPath = (protocol: "x402" | "mpp", t: { serviceId: string; slug: string }) =>
  `/api/${protocol}/pay/${t.serviceId}/${t.slug}`;

const challengeOf =
  (protocol: "x402" | "mpp") =>
  async (ctx: BenchContext): Promise<Seeded> => {
    const t = await gatewayTenant(ctx);
    return { keys: [], tenantId: t.tenantId, serviceId: t.serviceId, path: payPath(protocol, t) };
  };

/** A payment nonce unique over the run (and across runs): 20 random bytes per run, then the 12-byte sequence number. */
const RUN_NONCE = randomHex(20);
const seqHex = (vars: Vars) =>
  BigInt(vars.seq ?? 0)
    .toString(16)
    .padStart(24, "0");
const nonceOf = (vars: Vars) => `0x${RUN_NONCE}${seqHex(vars)}`;

/**
 * A paid x402 request per sequence: a fresh, well-formed `PAYMENT-SIGNATURE` each time (x402 v2, `exact`, an EIP-3009
 * authorization for the challenge's first requirement with a unique nonce; the stand-in facilitator checks no
 * signature, so the signature is a fixed 65-byte value). The terms come from the gateway's own 402 challenge, decoded
 * by @x402/core. The nonce also goes in the query (`n`), which the gateway forwards: the stand-in upstream logs it.
 */
/** A fresh x402 payment per sequence for a challenge's first requirement (see `paidX402`). */
const paymentFor = (required: ReturnType<typeof decodePaymentRequiredHeader>) => {
  const accepted = required.accepts[0]!;
  const payer = `0x${randomHex(20)}`;
  const signature = `0x${"1b".repeat(65)}`;
  return (vars: Vars): PaymentPayload => ({
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: {
      signature,
      authorization: {
        from: payer,
        to: accepted.payTo,
        value: accepted.amount,
        validAfter: "0",
        validBefore: String(Math.floor(Date.now() / 1000) + accepted.maxTimeoutSeconds),
        nonce: nonceOf(vars),
      },
    },
    // The 402's extensions, as x402 clients copy them (its challenge-nonce proves a resend is the buyer's).
    extensions: required.extensions,
  });
};

/** The 402 challenge of a payment URL, decoded. */
const challengeAt = async (ctx: BenchContext, path: string, origin = ctx.paymentUrl) => {
  const res = await fetch(origin + path);
  const header = res.headers.get("PAYMENT-REQUIRED");
  if (res.status !== 402 || !header)
    throw new Error(`seeding ${path}: the challenge answered ${res.status} ${(await res.text()).slice(0, 300)}`);
  return decodePaymentRequiredHeader(header);
};

/**
 * 1,000 tenants paying at once: the gateway tenant's own rows (tenant, service, ROUTE paywall) copied 1,000 times
 * (`cloneSeries`: ids and e-mails varied, the insert triggers move each copy's catalog version), each URL's own
 * challenge read while seeding (on the load's worker and on the accounting's). A sealed value is bound to its row's id, so the copies carry none (the service's
 * auth `none`, the paywall without headers): the one-tenant row is the first copy, doing the very same work.
 */
export const TENANT_COUNT = 1000;
const tenantCopies = (ctx: BenchContext) =>
  ctx.once("tenant copies", async () => {
    const t = await gatewayTenant(ctx);
    const tag = randomHex(4);
    const template = await ctx.d1
      .prepare("SELECT id FROM paywalls WHERE service_id = ?1 AND slug = ?2")
      .bind(t.serviceId, t.slug)
      .first<string>("id");
    if (!template) throw new Error("seeding the tenants scenario: no gateway paywall");
    // `printf`: the sequence's numbers may arrive as REALs (1.0), which `||` would spell so.
    const n = "printf('%d', n)";
    const tenantOfN = `'tn_${tag}_' || ${n}`;
    const serviceOfN = `'sv_${tag}_' || ${n}`;
    await cloneSeries(ctx.d1, "tenants", t.tenantId, TENANT_COUNT, {
      id: tenantOfN,
      email: `'t${tag}-' || ${n} || '@bench.test'`,
    });
    await cloneSeries(ctx.d1, "services", t.serviceId, TENANT_COUNT, {
      id: serviceOfN,
      tenant_id: tenantOfN,
      auth_method: "'none'",
      auth_config: "'{}'",
    });
    await cloneSeries(ctx.d1, "paywalls", template, TENANT_COUNT, {
      id: `'pw_${tag}_' || ${n}`,
      tenant_id: tenantOfN,
      service_id: serviceOfN,
      headers: "NULL",
    });
    const paths = Array.from({ length: TENANT_COUNT }, (_, i) =>
      payPath("x402", { serviceId: `sv_${tag}_${i + 1}`, slug: t.slug }),
    );
    const payments: ((vars: Vars) => PaymentPayload)[] = [];
    await inPool(paths.length, 16, async (i) => {
      payments[i] = paymentFor(await challengeAt(ctx, paths[i]!));
    });
    // The accounting worker too: its isolate has read each URL once, as the load's has, so its counts are the steady
    // state's rather than each tenant's first request in an isolate.
    if (ctx.accountingPaymentUrl)
      await inPool(paths.length, 16, async (i) => void (await challengeAt(ctx, paths[i]!, ctx.accountingPaymentUrl)));
    return { paths, payments };
  });

/** The paid request, each sequence paying the next of the first `tenants` copies in turn. */
const copiesPaying =
  (tenants: number) =>
  async (ctx: BenchContext): Promise<Seeded> => {
    const { paths, payments } = await tenantCopies(ctx);
    const which = (vars: Vars) => Number(vars.seq ?? 0) % tenants;
    return {
      keys: [],
      steps: [
        {
          method: "GET",
          path: (vars) => `${paths[which(vars)]}?n=${nonceOf(vars)}`,
          headers: (vars) => ({ "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payments[which(vars)]!(vars)) }),
        },
      ],
    };
  };

const paidX402 = async (ctx: BenchContext, slug?: string, peer?: boolean): Promise<Seeded> => {
  const tenant = await gatewayTenant(ctx);
  const t = { ...tenant, slug: slug ?? tenant.slug };
  const path = payPath("x402", t);
  const required = await challengeAt(ctx, path);
  const accepted = required.accepts[0]!;
  if (peer) {
    const given = await fetch(`${ctx.peerUrl}/__terms`, { method: "POST", body: JSON.stringify(accepted) });
    if (given.status !== 204) throw new Error(`seeding the peer row: its terms answered ${given.status}`);
  }
  const payment = paymentFor(required);
  return {
    keys: [],
    tenantId: t.tenantId,
    serviceId: t.serviceId,
    tagOf: nonceOf,
    steps: [
      {
        method: "GET",
        path: (vars) => `${path}?n=${nonceOf(vars)}`,
        headers: (vars) => ({ "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payment(vars)) }),
      },
    ],
  };
};

/** The records measurement (records.ts): the paid request on another worker's payment origin, and its paywall's id. */
export const recordsSeed = async (ctx: BenchContext, paymentUrl: string) => {
  const seeded = await paidX402({ ...ctx, paymentUrl });
  const t = await gatewayTenant(ctx);
  const paywallId = await ctx.d1
    .prepare("SELECT id FROM paywalls WHERE service_id = ?1 AND slug = ?2")
    .bind(t.serviceId, t.slug)
    .first<string>("id");
  if (!paywallId) throw new Error("seeding the records measurement: no gateway paywall");
  return { seeded, paywallId };
};

/**
 * The peer row: the same paid request (a fresh payment for the same terms, the same nonce in `n`) sent to the x402
 * SDK's own resource server (fixtures/x402-peer.ts), which verifies, forwards and settles at the same stand-ins.
 */
const peerX402 = async (ctx: BenchContext): Promise<Seeded> => ({ ...(await paidX402(ctx, undefined, true)), tagOf: undefined });

/**
 * One paid x402 request, made once while seeding (verified, forwarded, settled, its answer kept), then sent again by
 * every sequence with the same `PAYMENT-SIGNATURE`: the resend path, answered from the ledger's kept answer.
 */
const resentX402 = async (ctx: BenchContext): Promise<Seeded> => {
  const paid = await paidX402(ctx);
  const step = paid.steps![0]!;
  const vars: Vars = { seq: String(2 ** 40 + Math.floor(Math.random() * 2 ** 20)) };
  const path = (step.path as (v: Vars) => string)(vars);
  const headers = step.headers!(vars);
  const res = await fetch(ctx.paymentUrl + path, { headers });
  if (res.status !== 200) throw new Error(`seeding the resend scenario: the payment answered ${res.status}`);
  return {
    keys: [],
    tenantId: paid.tenantId,
    serviceId: paid.serviceId,
    steps: [{ method: "GET", path, headers: () => headers }],
  };
};

/**
 * A paid x402 request per sequence on a paywall whose answers are cached (`cacheRules`: an hour, the query not in the
 * key, so the nonce in `n` does not vary it), primed once while seeding: each request is verified and settled at the
 * stand-in facilitator and answered from the edge cache, never forwarded.
 */
const cachedX402 = async (ctx: BenchContext): Promise<Seeded> => {
  const paid = await paidX402(ctx, CACHED_SLUG);
  const step = paid.steps![0]!;
  const vars: Vars = { seq: String(2 ** 41 + Math.floor(Math.random() * 2 ** 20)) };
  const res = await fetch(ctx.paymentUrl + (step.path as (v: Vars) => string)(vars), { headers: step.headers!(vars) });
  if (res.status !== 200) throw new Error(`seeding the cached scenario: the payment answered ${res.status}`);
  return { ...paid, tagOf: undefined };
};

// ---- x402 sessions (docs/sessions.md): one deposit per channel, then a voucher per call ----

/** The gateway tenant's paywall with sessions on. */
const SESSION_SLUG = "quote-session";
/**
 * Vouchers signed per channel before the load (≈ 1–2 ms each in this process, so ≈ 2–3 s of seeding for 32 channels):
 * at today's ≈ 80 req/s a connection sends ≈ 10 in the warm-up and the load, and channels 0–3 ≈ 12 more in the probe,
 * prime and accounting passes. A voucher path ≈ 4× faster would use them all: a channel out of vouchers sends no payment,
 * and its 402s count as unexpected statuses (raise this then).
 */
const SESSION_VOUCHERS = 48;
/** One channel per load connection. */
const SESSION_CHANNELS = DEFAULTS.connections;

/**
 * The voucher call of an x402 session: the gateway tenant's paywall `quote-session` (created through the API with
 * sessions on; the bench worker has `SESSION_AUTHORIZER_KEY`), one channel per load connection, each opened while
 * seeding by a real deposit through the gateway (a buyer key of its own, `createBatchSettlementEIP3009DepositPayload`
 * for the 402's `batch-settlement` requirement; the stand-in facilitator answers the deposit's `/verify` and `/settle`
 * as the scheme's facilitator does), then `SESSION_VOUCHERS` real EIP-712 vouchers per channel (`signVoucher`,
 * cumulative 2 × price, 3 × price, … in order), signed before the load. Each sequence pays its connection's channel
 * with the next voucher (`vars.connection`, load.ts); a sequence without one (the probe, prime) pays on channel 0.
 * A channel out of vouchers sends no payment: its 402s count as unexpected statuses.
 */
const sessionVouchers = async (ctx: BenchContext): Promise<Seeded> => {
  const t = await gatewayTenant(ctx);
  const { price } = paywallBody(t.serviceId, SESSION_SLUG);
  const deposit = (BigInt(price) * BigInt(SESSION_VOUCHERS + 1)).toString();
  const body = { ...paywallBody(t.serviceId, SESSION_SLUG), sessions: { enabled: true, minDeposit: deposit } };
  await ctx.once("session paywall", async () =>
    createdId(await ctx.api("POST", "/v1/paywalls", t.key, body), "the session paywall"),
  );
  const path = payPath("x402", { ...t, slug: SESSION_SLUG });
  const required = await challengeAt(ctx, path);
  const accepted = required.accepts.find((a) => a.scheme === "batch-settlement");
  if (!accepted) throw new Error(`seeding the session scenario: the 402 offers no session (${JSON.stringify(required.accepts)})`);
  const envelope = (payload: Record<string, unknown>): PaymentPayload => ({
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload,
    extensions: required.extensions,
  });
  const started = Date.now();
  const channels: string[][] = [];
  await inPool(SESSION_CHANNELS, 8, async (i) => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const config = buildChannelConfig({ signer: buyer, salt: `0x${"00".repeat(32)}` } as never, accepted);
    const opened = await createBatchSettlementEIP3009DepositPayload(buyer, 2, accepted, config, deposit, price);
    const res = await fetch(ctx.paymentUrl + path, {
      headers: { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(envelope(opened.payload)) },
    });
    if (res.status !== 200)
      throw new Error(`seeding the session scenario: the deposit answered ${res.status} ${await res.text()}`);
    const channelId = (opened.payload as { voucher: { channelId: `0x${string}` } }).voucher.channelId;
    const headers: string[] = [];
    for (let k = 2; k <= SESSION_VOUCHERS + 1; k++) {
      const voucher = await signVoucher(buyer, channelId, (BigInt(price) * BigInt(k)).toString(), accepted.network);
      headers.push(encodePaymentSignatureHeader(envelope({ type: "voucher", channelConfig: config, voucher })));
    }
    channels[i] = headers;
  });
  ctx.log(
    `${SESSION_CHANNELS} channels opened, ${SESSION_CHANNELS * SESSION_VOUCHERS} vouchers signed (${Date.now() - started} ms)`,
  );
  const used = channels.map(() => 0);
  return {
    keys: [],
    tenantId: t.tenantId,
    serviceId: t.serviceId,
    steps: [
      {
        method: "GET",
        path,
        headers: (vars): Record<string, string> => {
          const c = Number(vars.connection ?? 0) % SESSION_CHANNELS;
          const header = channels[c]![used[c]!++];
          return header === undefined ? {} : { "PAYMENT-SIGNATURE": header };
        },
      },
    ],
  };
};

// ---- The paid MCP server of a service (docs/mcp.md): POST /api/mcp/{serviceId}, stateless Streamable HTTP ----

/** What the transport requires of every POST (docs/mcp.md, "Transport"); no session. */
const MCP_HEADERS = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
const mcpPath = (serviceId: string) => `/api/mcp/${serviceId}`;
const rpc = (id: number | string, method: string, params?: unknown) => ({ jsonrpc: "2.0", id, method, params });

/** A JSON-RPC result (not an error), from its body. */
const resultIn = (body: string): Record<string, unknown> | undefined => {
  try {
    return (JSON.parse(body) as { result?: Record<string, unknown> }).result;
  } catch {
    return undefined;
  }
};

/**
 * An answer check for a list answered again and again: the first answer that `full` accepts (a whole JSON parse)
 * becomes the reference, and every later answer must be that answer byte for byte up to its JSON-RPC id (the last
 * member: `,"id":<id>}`). The same strictness as parsing each ~96 KiB answer, without the load generator spending
 * about 0.4 ms of the machine's two cores per answer, which the floor's small answer does not cost it.
 */
function sameListAs(full: (body: string) => boolean): (body: string) => boolean {
  let reference: string | undefined;
  const head = (body: string) => body.slice(0, body.lastIndexOf(',"id":'));
  return (body) => {
    if (reference === undefined) {
      if (!full(body)) return false;
      reference = head(body);
      return true;
    }
    const tail = body.slice(reference.length);
    return body.startsWith(reference) && /^,"id":\d{1,20}\}$/.test(tail);
  };
}

/**
 * `tools/list` of a service with 100 paywalls: a tenant and a service through the API, then 100 GET paywalls through
 * the db function the POST handler calls (`insertPaywallWithinCap`) with the handler's row, as the services tenant's
 * are: 100 paid tools, the list's maximum. An answer counts only as a result listing all 100.
 */
const MCP_PAYWALLS = 100;
const mcpToolsList = async (ctx: BenchContext): Promise<Seeded> => {
  const { tenant, keys } = await ctx.newTenant({ keys: 1 });
  const serviceId = await createService(ctx, keys[0]!, 0);
  await inPool(MCP_PAYWALLS, MCP_PAYWALLS, async (j) => {
    const row = { ...(await paywallRow(tenant, serviceId, `tool${j}`)), allowedMethods: ["GET"] };
    const outcome = await insertPaywallWithinCap(ctx.db, row, PAYWALL_CAP, "testnet");
    if ("refused" in outcome) throw new Error(`seeding an MCP paywall: refused (${outcome.refused})`);
  });
  ctx.log(`${MCP_PAYWALLS} paywalls through insertPaywallWithinCap`);
  return {
    keys: [],
    tenantId: tenant.id,
    serviceId,
    steps: [
      {
        method: "POST",
        path: mcpPath(serviceId),
        headers: () => MCP_HEADERS,
        body: (vars: Vars) => rpc(Number(vars.seq ?? 0), "tools/list"),
        answered: sameListAs((body) => (resultIn(body)?.tools as unknown[] | undefined)?.length === MCP_PAYWALLS),
      },
    ],
  };
};

/**
 * The paid request of `GET /api/x402/pay (paid)` as an MCP tool call: the gateway tenant's paywall (`quote`, GET and
 * POST: tool `quote_GET`), its `PaymentRequired` read once from an unpaid call (the tool error's structured content),
 * then a fresh payment per sequence (`paymentFor`, the HTTP row's nonces) in `_meta["x402/payment"]`, the nonce as
 * the argument `n` (forwarded as the query, as the HTTP row's). Same stand-ins, same paywall, same pipeline; an answer
 * counts only when settled (`_meta["x402/payment-response"]`, no tool error).
 */
const MCP_TOOL = "quote_GET";
const paidMcpX402 = async (ctx: BenchContext): Promise<Seeded> => {
  const t = await gatewayTenant(ctx);
  const path = mcpPath(t.serviceId);
  const call = (vars: Vars, meta?: Record<string, unknown>) =>
    rpc(Number(vars.seq ?? 0), "tools/call", { name: MCP_TOOL, arguments: { n: nonceOf(vars) }, _meta: meta });
  const unpaid = await fetch(ctx.paymentUrl + path, {
    method: "POST",
    headers: { ...MCP_HEADERS, "content-type": "application/json" },
    body: JSON.stringify(call({ seq: "0" })),
  });
  const result = resultIn(await unpaid.text());
  if (unpaid.status !== 200 || result?.isError !== true || !result.structuredContent)
    throw new Error(
      `seeding the MCP paid call: the unpaid call answered ${unpaid.status} ${JSON.stringify(result)?.slice(0, 300)}`,
    );
  const payment = paymentFor(result.structuredContent as ReturnType<typeof decodePaymentRequiredHeader>);
  return {
    keys: [],
    tenantId: t.tenantId,
    serviceId: t.serviceId,
    steps: [
      {
        method: "POST",
        path,
        headers: () => MCP_HEADERS,
        body: (vars: Vars) => call(vars, { "x402/payment": payment(vars) }),
        answered: (body) => {
          const r = resultIn(body);
          return (
            r !== undefined &&
            r.isError !== true &&
            (r._meta as Record<string, unknown> | undefined)?.["x402/payment-response"] !== undefined
          );
        },
      },
    ],
  };
};

/** The storage floors of the gateway's URLs (fixtures/storage-floor.ts): the same paywall, the same read. */
const paywallReadFloor = async (ctx: BenchContext): Promise<Seeded> => {
  const t = await gatewayTenant(ctx);
  return { keys: [], path: `/paywall/${t.serviceId}/${t.slug}` };
};
const paidFloor = async (ctx: BenchContext): Promise<Seeded> => {
  const t = await gatewayTenant(ctx);
  return { keys: [], steps: [{ method: "GET", path: (vars) => `/paid/${t.serviceId}/${t.slug}?n=${vars.seq}` }] };
};

// ---- What each list handler asks D1 (explain.ts): the handler's db call, with the handler's arguments ----

const tenantOf = (seeded: Seeded) => {
  if (!seeded.tenantId) throw new Error("explain: the seed returned no tenantId");
  return seeded.tenantId;
};
const explainAuth = async (db: Db, seeded: Seeded) => findKeyWithTenantByHash(db, await hashApiKey(seeded.keys[0]!));
const explainPaywalls = (db: Db, seeded: Seeded) =>
  findPaywallsPage(db, tenantOf(seeded), { limit: 100, offset: 0 }, { serviceId: undefined, enabled: undefined });

/** POST then DELETE as the handlers do them (the insert with its cap check, the ownership read, the delete). */
const explainWrite = async (db: Db, seeded: Seeded) => {
  if (!seeded.serviceId) throw new Error("explain: the seed returned no serviceId");
  const service = await findService(db, seeded.serviceId);
  const row = await paywallRow({ id: tenantOf(seeded), walletAddress: `0x${randomHex(20)}` }, service!.id, `x-${randomHex(6)}`);
  const id = row.id;
  await insertPaywallWithinCap(db, row, PAYWALL_CAP, service!.mode);
  await findPaywall(db, id);
  await deletePaywallRow(db, id);
};

/** What the earnings page asks D1 besides the session: filter choices, the roll-ups (90 days of revenue, 30 of traffic, cache), the two first pages. */
const explainEarnings = async (db: Db, seeded: Seeded) => {
  const tenantId = tenantOf(seeded);
  const page = { limit: 25, offset: 0 };
  await listPaywallNames(db, tenantId, 200);
  await listServiceNames(db, tenantId, 200);
  const networks = networksMatching({});
  const days = lastUtcDays(new Date(), 30);
  await findDailyRevenue(db, tenantId, lastUtcDays(new Date(), 90), "tenant", networks);
  await findDailyTraffic(db, tenantId, days, "tenant");
  await findTransactionsPage(db, tenantId, page, {});
  await findEventsPage(db, tenantId, page, {});
  await findCacheTotals(db, tenantId, days, "tenant");
};

/** The reference app scenarios are measured alongside unless they name another (`floor`). */
export const DEFAULT_FLOOR = "ref: storage floor";
const PAYWALL_READ_FLOOR = "ref: paywall-read floor";
const PAID_FLOOR = "ref: paid-request floor";

export const REFERENCES: Scenario[] = [
  { name: "ref: ceiling", target: "ceiling", method: "GET", path: "/", read: true },
  { name: DEFAULT_FLOOR, target: "floor", method: "GET", path: "/", read: true, seed: manyKeys },
  {
    name: PAYWALL_READ_FLOOR,
    target: "floor",
    method: "GET",
    path: "/paywall/{serviceId}/{slug}",
    pathFromSeed: true,
    read: true,
    seed: paywallReadFloor,
    pairOnly: true,
  },
  {
    name: PAID_FLOOR,
    target: "floor",
    method: "GET",
    path: "/paid/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    seed: paidFloor,
    pairOnly: true,
  },
];

export const SCENARIOS: Scenario[] = [
  // No key: counted per client address. One address per connection (32 clients), as the edge would see them.
  { name: "GET /v1/health", target: "app", method: "GET", path: "/v1/health", read: true, ownAddress: true },
  {
    name: "GET /v1/me (200 keys)",
    target: "app",
    method: "GET",
    path: "/v1/me",
    read: true,
    seed: manyKeys,
    explain: explainAuth,
  },
  { name: "GET /v1/me (hot key)", target: "app", method: "GET", path: "/v1/me", read: true, seed: hotKey },
  {
    name: "GET /v1/services?limit=20",
    target: "app",
    method: "GET",
    path: "/v1/services?limit=20",
    read: true,
    seed: servicesTenant,
    explain: (db, seeded) => findServicesPage(db, tenantOf(seeded), { limit: 20, offset: 0 }, { mode: undefined }),
  },
  {
    name: "GET /v1/paywalls?limit=100",
    target: "app",
    method: "GET",
    path: "/v1/paywalls?limit=100",
    read: true,
    seed: servicesTenant,
    explain: explainPaywalls,
  },
  {
    name: "GET /v1/events?limit=100",
    target: "app",
    method: "GET",
    path: "/v1/events?limit=100",
    read: true,
    seed: historyTenant,
    explain: (db, seeded) => findEventsPage(db, tenantOf(seeded), { limit: 100, offset: 0 }, {}),
  },
  {
    name: "GET /v1/transactions?limit=100",
    target: "app",
    method: "GET",
    path: "/v1/transactions?limit=100",
    read: true,
    seed: historyTenant,
    explain: (db, seeded) => findTransactionsPage(db, tenantOf(seeded), { limit: 100, offset: 0 }, {}),
  },
  {
    name: "POST+DELETE /v1/paywalls",
    target: "app",
    method: "POST",
    path: "/v1/paywalls",
    read: false,
    expect: [200, 201],
    seed: writePath,
    explain: explainWrite,
  },
  {
    name: "list, 1,000 paywalls",
    target: "app",
    method: "GET",
    path: "/v1/paywalls?limit=100",
    read: true,
    seed: paywallTenant(1_000),
    explain: explainPaywalls,
  },
  {
    name: "list, 100,000 paywalls",
    target: "app",
    method: "GET",
    path: "/v1/paywalls?limit=100",
    read: true,
    seed: paywallTenant(100_000),
    explain: explainPaywalls,
    compareWith: "list, 1,000 paywalls",
  },
  // The dashboard's earnings page (charts from the daily roll-ups, first pages of transactions and events). Not counted
  // as an API read (`read: false`): a whole page of several statements, held to its own scale target below.
  {
    name: "earnings page, 1,000 records",
    target: "app",
    method: "GET",
    path: "/dashboard/earnings",
    read: false,
    seed: earningsOf(1_000),
    explain: explainEarnings,
  },
  {
    name: "earnings page, 100,000 records",
    target: "app",
    method: "GET",
    path: "/dashboard/earnings",
    read: false,
    seed: earningsOf(100_000),
    explain: explainEarnings,
    compareWith: "earnings page, 1,000 records",
  },
  // The payment gateway's buyer-facing URLs (no key). Not API reads (`read: false`): held to their own targets, each
  // measured alongside the storage floor of the same work (fixtures/storage-floor.ts).
  {
    name: X402_CHALLENGE,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    expect: [402],
    seed: challengeOf("x402"),
    floor: PAYWALL_READ_FLOOR,
  },
  {
    name: MPP_CHALLENGE,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/mpp/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    expect: [402],
    seed: challengeOf("mpp"),
    floor: PAYWALL_READ_FLOOR,
  },
  {
    name: X402_PAID,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    seed: paidX402,
    floor: PAID_FLOOR,
  },
  {
    // One of the tenant copies paying alone: the base of the comparison below (the same work per request).
    name: X402_ONE_TENANT,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    seed: copiesPaying(1),
    floor: PAID_FLOOR,
  },
  {
    // The same paid request spread over 1,000 tenants, measured in slices interleaved with the one tenant's.
    name: X402_TENANTS,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    seed: copiesPaying(TENANT_COUNT),
    floor: PAID_FLOOR,
    compareWith: X402_ONE_TENANT,
  },
  {
    // Measured right after the paid request, in the same run, against the same stand-ins: the target is their ratio.
    name: X402_PEER,
    target: "peer",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    read: false,
    seed: peerX402,
  },
  {
    name: X402_RESEND,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    seed: resentX402,
    floor: PAYWALL_READ_FLOOR,
    noStandIns: true,
  },
  {
    name: X402_CACHED,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    seed: cachedX402,
    floor: PAID_FLOOR,
    noUpstream: true,
  },
  {
    // The paid MCP server, last (a whole run short of time skips these first): the tool list of a service with 100
    // paywalls, measured alongside the storage floor.
    name: MCP_TOOLS_LIST,
    target: "app",
    origin: "payment",
    method: "POST",
    path: "/api/mcp/{serviceId}",
    pathFromSeed: true,
    read: false,
    seed: mcpToolsList,
    floor: DEFAULT_FLOOR,
  },
  {
    // The paid request as an MCP tool call, in slices interleaved with the HTTP paid request (same stand-ins, same run).
    name: MCP_PAID,
    target: "app",
    origin: "payment",
    method: "POST",
    path: "/api/mcp/{serviceId}",
    pathFromSeed: true,
    read: false,
    seed: paidMcpX402,
    floor: PAID_FLOOR,
    compareWith: X402_PAID,
  },
  {
    // Voucher calls on open channels, in slices interleaved with the x402 challenge (its reference). Last: ≈ 17 s with
    // its seeding, so a whole run short of time skips it rather than the rows before it.
    name: X402_SESSION,
    target: "app",
    origin: "payment",
    method: "GET",
    path: "/api/x402/pay/{serviceId}/{slug}",
    pathFromSeed: true,
    read: false,
    seed: sessionVouchers,
    floor: PAYWALL_READ_FLOOR,
    compareWith: X402_CHALLENGE,
    noFacilitator: true,
  },
];
