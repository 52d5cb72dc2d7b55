// The paid path's capacity model (docs/scale.md): each component a paid request uses, its published Cloudflare limit,
// how much of it one request uses, and a load spread over tenants, buyers and isolates. `npm run -s capacity` prints
// each component's utilisation under the load; the model is pure (no Node, no workerd) so that it is unit-tested.

/** A limit as Cloudflare documents it, and where. */
export interface Limit {
  /** What the limit bounds: per second (rate) or per request (count). */
  value: number;
  unit: string;
  source: string;
}

export const LIMITS = {
  d1: {
    value: 1000,
    unit: "queries/s per database (one query at a time, at 1 ms each)",
    source: "D1 docs, Platform › Limits (a database is single-threaded: ~1,000 queries/s at 1 ms per query)",
  },
  durableObject: {
    value: 1000,
    unit: "requests/s per object (soft limit)",
    source: "Durable Objects docs, Platform › Limits (an object is single-threaded: soft limit of 1,000 requests/s)",
  },
  queue: {
    value: 5000,
    unit: "messages/s per queue",
    source: "Queues docs, Platform › Limits (message throughput: 5,000 messages/s per queue)",
  },
  subrequests: {
    value: 10_000,
    unit: "subrequests per request (Workers Paid)",
    source: "Workers docs, Platform › Limits (Subrequests: 50/request Free, 10,000/request Paid)",
  },
  connections: {
    value: 6,
    unit: "simultaneous outgoing connections per request",
    source: "Workers docs, Platform › Limits (Simultaneous outgoing connections/request: 6)",
  },
} satisfies Record<string, Limit>;

/** What one paid x402 request uses, in the design where its records go to its payment's object and reach D1 in batches. */
export interface Usage {
  /**
   * Calls to the payment's own Durable Object: on the request path the resend lookup, `start`, the answer kept before
   * settling, `complete` (measured by `npm run bench`: 4.00 per request); then the queue consumer's landed report.
   */
  paymentObjectCalls: number;
  /** Alarms the payment's object sets to hand its records on (one object, one alarm at a time). */
  alarms: number;
  /** Queue messages the records take to the D1 consumer. */
  queueMessages: number;
  /** D1 statements on the request path (0 is the design). */
  requestPathStatements: number;
  /** D1 statements the batches use, per request (≤ 50 per 1,000 requests). */
  batchedStatements: number;
  /** Rows those statements write per request (transaction, events, moves, roll-ups, the kept answer). */
  batchedRows: number;
  /** Subrequests: facilitator /verify and /settle, the upstream, the payment object's 4 calls (the object sends the queue message). */
  subrequests: number;
  /** The most outgoing connections open at once (the calls are made one after another). */
  connectionsAtOnce: number;
}

export const PAID_REQUEST: Usage = {
  paymentObjectCalls: 5,
  alarms: 1,
  queueMessages: 1,
  requestPathStatements: 0,
  batchedStatements: 0.05,
  batchedRows: 9,
  subrequests: 7,
  connectionsAtOnce: 1,
};

export interface Load {
  /** Paid requests per second, all tenants together. */
  rps: number;
  tenants: number;
  /** The busiest tenant's share of the requests, and the busiest buyer's. */
  busiestTenantShare: number;
  busiestBuyerShare: number;
  /** Isolates serving the load (each keeps its own paywall states). */
  isolates: number;
  /** How a paywall's state is checked: read per URL after PAYWALL_STATE_TTL_MS, or one version-map read per isolate. */
  stateCheck: "per-url" | "version-map";
  stateTtlMs: number;
  /** D1 copies taking the reads (the primary and its read replicas, through D1 sessions). */
  d1ReadCopies: number;
  /** D1 databases the read model is split over (by tenant): the batched writes of a tenant go to its database. */
  d1Databases: number;
  /** Queues the records are spread over (by payment id). */
  queues: number;
  /** D1 time of one batched statement, plus its time per row written (ms). */
  d1StatementMs: number;
  d1RowMs: number;
  /** D1 time of one paywall state read (ms). */
  d1ReadMs: number;
}

export const LOAD: Load = {
  rps: 10_000,
  tenants: 10_000,
  busiestTenantShare: 0.1,
  busiestBuyerShare: 0.05,
  isolates: 100,
  stateCheck: "version-map",
  stateTtlMs: 2000,
  d1ReadCopies: 6,
  d1Databases: 1,
  queues: 5,
  d1StatementMs: 1,
  d1RowMs: 0.004,
  d1ReadMs: 1,
};

export interface Row {
  component: string;
  /** What the load puts on the component's most loaded unit, in the limit's unit. */
  used: number;
  limit: Limit;
  utilisation: number;
  note: string;
}

/**
 * Paywall state reads per second. Per URL: an isolate reads a URL's state when its last read is older than the TTL,
 * so a (isolate, URL) pair seeing λ requests/s reads λ / (1 + λ·TTL) times a second. Version map: one read per isolate
 * per TTL names every tenant's version, whatever the URLs.
 */
export function stateReadsPerSecond(load: Load): number {
  const ttl = load.stateTtlMs / 1000;
  if (load.stateCheck === "version-map") return load.isolates / ttl;
  const pairRate = (rps: number) => rps / load.isolates;
  const reads = (lambda: number) => lambda / (1 + lambda * ttl);
  const busiest = load.rps * load.busiestTenantShare;
  const others = (load.rps - busiest) / Math.max(1, load.tenants - 1);
  return load.isolates * (reads(pairRate(busiest)) + (load.tenants - 1) * reads(pairRate(others)));
}

export function simulate(usage: Usage = PAID_REQUEST, load: Load = LOAD): Row[] {
  const row = (component: string, used: number, limit: Limit, note: string): Row => ({
    component,
    used,
    limit,
    utilisation: used / limit.value,
    note,
  });
  const reads = stateReadsPerSecond(load);
  // The busiest database's share of the writes: an even split by tenant, but never less than the busiest tenant's.
  const share = Math.max(1 / load.d1Databases, load.busiestTenantShare);
  const d1WriteMs =
    share * load.rps * (usage.batchedStatements * load.d1StatementMs + usage.batchedRows * load.d1RowMs) +
    share * load.rps * usage.requestPathStatements * load.d1StatementMs;
  // Busy milliseconds per second, expressed as queries/s at 1 ms: the unit of D1's figure.
  const d1Primary = d1WriteMs + (reads * load.d1ReadMs) / load.d1ReadCopies;
  const d1Replica = (reads * load.d1ReadMs) / load.d1ReadCopies;
  // A payment's object takes only its own payment's calls, whichever tenant or buyer it is: the busiest buyer's
  // payments are still one object each, and all of one payment's calls land within about a second.
  const perPayment = usage.paymentObjectCalls;
  return [
    row(
      "D1 primary, the busiest (batched writes, state reads)",
      d1Primary,
      LIMITS.d1,
      `${fmt(share * load.rps * usage.batchedStatements)} batched statements/s writing ${fmt(share * load.rps * usage.batchedRows)} rows/s ` +
        `(${load.d1Databases} database${load.d1Databases > 1 ? "s" : ""}); ${fmt(load.rps * usage.requestPathStatements)} on the request path`,
    ),
    row(
      "D1 read replica (paywall state reads)",
      d1Replica,
      LIMITS.d1,
      `${fmt(reads)} state reads/s (${load.stateCheck}, ${load.stateTtlMs} ms, ${load.isolates} isolates) over ${load.d1ReadCopies} copies`,
    ),
    row(
      "payment Durable Object (the busiest)",
      perPayment,
      LIMITS.durableObject,
      `one object per payment, one alarm at a time hands its records on: the busiest tenant (${fmt(load.rps * load.busiestTenantShare)} req/s) and buyer ` +
        `(${fmt(load.rps * load.busiestBuyerShare)} req/s) spread over their payments' objects`,
    ),
    row(
      "Queue (the busiest of the record queues)",
      (load.rps * usage.queueMessages) / load.queues,
      LIMITS.queue,
      `${fmt(load.rps * usage.queueMessages)} messages/s over ${load.queues} queues`,
    ),
    row(
      "Workers subrequests (per paid request)",
      usage.subrequests,
      LIMITS.subrequests,
      "verify, upstream, settle, 4 payment object calls",
    ),
    row(
      "Workers simultaneous connections (per paid request)",
      usage.connectionsAtOnce,
      LIMITS.connections,
      "the calls are made one after another",
    ),
  ];
}

/** The component that reaches its limit first as the load grows: the highest utilisation, and the load it reaches it at. */
export function breaksFirst(rows: Row[], load: Load = LOAD): { component: string; atRps: number } {
  const rated = rows.filter((r) => !r.limit.unit.includes("per request"));
  const worst = rated.reduce((a, b) => (b.utilisation > a.utilisation ? b : a));
  return { component: worst.component, atRps: Math.floor(load.rps / worst.utilisation) };
}

const fmt = (n: number) => (Number.isInteger(n) ? n.toLocaleString("en-US") : n.toFixed(2));

export function render(rows: Row[], load: Load = LOAD): string {
  const lines = [
    `load: ${fmt(load.rps)} paid requests/s over ${fmt(load.tenants)} tenants; busiest tenant ${load.busiestTenantShare * 100}%, ` +
      `busiest buyer ${load.busiestBuyerShare * 100}%; ${load.isolates} isolates; state check ${load.stateCheck} (${load.stateTtlMs} ms)`,
    "",
    `${"component".padEnd(52)}  ${"used".padStart(9)}  ${"limit".padStart(7)}  ${"use".padStart(6)}  limit's unit`,
  ];
  for (const r of rows)
    lines.push(
      `${r.component.padEnd(52)}  ${fmt(r.used).padStart(9)}  ${fmt(r.limit.value).padStart(7)}  ${`${(r.utilisation * 100).toFixed(1)}%`.padStart(6)}${r.utilisation > 0.5 ? "!" : " "} ${r.limit.unit}: ${r.note}`,
    );
  const first = breaksFirst(rows, load);
  lines.push("", `breaks first: ${first.component}, at about ${fmt(first.atRps)} paid requests/s`);
  lines.push(rows.every((r) => r.utilisation <= 0.5) ? "every component at or under half its limit" : "OVER HALF: marked !");
  return lines.join("\n");
}

/** The three loads `npm run -s capacity` prints: as designed, with one D1 database, with the per-URL state check of before. */
export const VARIANTS: { name: string; load: Load }[] = [
  { name: "the design: version map per isolate, read model over 2 D1 databases", load: { ...LOAD, d1Databases: 2 } },
  { name: "one D1 database for the read model", load: LOAD },
  {
    name: "the state check before the version map (per URL, 2 s), 2 D1 databases",
    load: { ...LOAD, d1Databases: 2, stateCheck: "per-url" },
  },
];

// `npm run -s capacity`
if ((import.meta as { main?: boolean }).main) {
  for (const v of VARIANTS) console.log(`## ${v.name}\n\n${render(simulate(PAID_REQUEST, v.load), v.load)}\n`);
}
