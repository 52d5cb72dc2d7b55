// Drives one scenario: a closed-loop load over keep-alive connections for the throughput figures (runLoad), then a
// short pass on the accounting worker.
import { Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { gunzipSync } from "node:zlib";
import type { Traced } from "./overhead.ts";
import type { Scenario, Seeded, Step, Vars } from "./scenarios.ts";
import { parseServerTiming } from "./server-timing-header.ts";
import { clockMs } from "./stand-ins.ts";

export interface LoadResult {
  requests: number;
  /** CPU time of the workerd process per request (ms), if it could be sampled. */
  cpuMsPerReq?: number;
  seconds: number;
  rps: number;
  /** Exact percentiles over every response's latency (ms), each measured from the request's start to its body's end. */
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  statusCounts: Record<string, number>;
}

export interface Accounting {
  requests: number;
  statementsPerReq: number;
  doCallsPerReq: number;
  d1MsPerReq: number;
  doMsPerReq: number;
  /** Server-Timing `app`: the whole middleware chain's wall time (D1 and DO waits included). */
  appMsPerReq: number;
  /** Response body bytes. */
  bytesPerReq: number;
  non2xx: number;
  missingHeader: number;
  statusCounts: Record<string, number>;
  /** Per step of a multi-request sequence (the write path's POST and DELETE). */
  steps?: { step: string; requests: number; statementsPerReq: number; doCallsPerReq: number }[];
}

export const stepsOf = (scenario: Scenario, seeded: Seeded): Step[] =>
  seeded.steps ?? [{ method: scenario.method, path: seeded.path ?? scenario.path, body: scenario.body }];

/** A seeded "key" that is a dashboard session: sent as the Cookie header instead of a bearer key. */
export const COOKIE_KEY = "cookie:";

/**
 * The client address of a request: a scenario with `ownAddress` sends each connection's requests from an address of
 * its own (`CF-Connecting-IP`, as Cloudflare sets it), so a per-address limit meets the load of one client per
 * connection rather than the whole load from one address. -1: the runner's own requests (probe, prime, accounting).
 */
export const clientAddress = (connection: number) =>
  connection < 0 ? "198.18.255.254" : `198.18.${connection >> 8}.${(connection & 255) + 1}`;

/** What fetch (undici) and browsers send: the app may answer gzip, which a kept body is decoded from. */
const ACCEPT_ENCODING = "gzip, deflate, br";

function headersFor(
  scenario: Scenario,
  key: string | undefined,
  step: Step,
  vars: Vars,
  connection = -1,
): Record<string, string> {
  const headers: Record<string, string> = { "accept-encoding": ACCEPT_ENCODING, ...step.headers?.(vars) };
  if (scenario.ownAddress) headers["cf-connecting-ip"] = clientAddress(connection);
  if (key?.startsWith(COOKIE_KEY)) headers.cookie = key.slice(COOKIE_KEY.length);
  else if (key) headers.authorization = `Bearer ${key}`;
  if (step.body !== undefined) headers["content-type"] = "application/json";
  return headers;
}

/** A kept body as text, gunzipped when the app compressed it. */
const decoded = (headers: IncomingHttpHeaders, bytes: Buffer) =>
  (headers["content-encoding"] === "gzip" ? gunzipSync(bytes) : bytes).toString("utf8");

function bodyOf(step: Step, vars: Vars): string | undefined {
  const body = typeof step.body === "function" ? (step.body as (vars: Vars) => unknown)(vars) : step.body;
  return body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
}

/** Sequence numbers unique over the whole run (`vars.seq`), e.g. for unique slugs in request bodies. */
let sequence = 0;
/** `connection`: the index of the load's connection (or of the accounting's worker) sending the sequence. */
const newVars = (connection?: number): Vars =>
  connection === undefined ? { seq: String(++sequence) } : { seq: String(++sequence), connection: String(connection) };

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[i]! * 100) / 100;
}

/** One load run; slices of the same scenario are merged by `summarize`. */
export interface RawLoad {
  latencies: number[];
  cpuMs: number | undefined;
  requests: number;
  seconds: number;
  errors: number;
  non2xx: number;
  statusCounts: Record<string, number>;
  /** Per request, when the seed tags requests (`Seeded.tagOf`): the tag, sent and answered (stand-ins.ts clockMs). */
  traced?: Traced[];
}

interface Answer {
  status: number;
  body: string;
}

/**
 * One request on a keep-alive agent; resolves once the whole body has arrived. Its body is read into a string only
 * when `keepBody` (a step that captures from it): otherwise its bytes are drained, as a load generator such as wrk does,
 * so decoding large answers in this process does not take CPU from the workerd it shares the machine with.
 */
function request(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
  keepBody = true,
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        if (keepBody) res.on("data", (c: Buffer) => chunks.push(c));
        else res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: keepBody ? decoded(res.headers, Buffer.concat(chunks)) : "" }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body);
  });
}

const REQUEST_TIMEOUT_MS = 10_000;

/**
 * A closed-loop load of `connections` concurrent request sequences over keep-alive connections for `duration` seconds,
 * then a drain: no sequence starts after the deadline, and the run ends when the last one in flight has answered. Every
 * request sent is counted, over the time until its answer, so a slow endpoint's throughput is not cut short by the
 * requests in flight at the deadline, and no abandoned work spills into the next slice (the storage floor's).
 *
 * Each sequence takes the next key (round-robin); its later steps reuse it and may use what earlier steps captured. A
 * step whose path function returns undefined (an earlier step failed) starts the sequence over.
 */
export async function runLoad(
  baseUrl: string,
  scenario: Scenario,
  seeded: Seeded,
  options: { connections: number; duration: number; cpu?: () => number | undefined },
): Promise<RawLoad> {
  const url = new URL(baseUrl);
  const steps = stepsOf(scenario, seeded);
  const keys = seeded.keys;
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const out: RawLoad = { latencies: [], cpuMs: undefined, requests: 0, seconds: 0, errors: 0, non2xx: 0, statusCounts: {} };
  const traced: Traced[] | undefined = seeded.tagOf ? [] : undefined;
  if (traced) out.traced = traced;
  const origin = clockMs() - performance.now(); // + performance.now(): the clock the stand-ins log in (stand-ins.ts)
  let nextKey = 0;
  const cpuBefore = options.cpu?.();
  const start = performance.now();
  const deadline = start + options.duration * 1000;
  const connection = async (_: unknown, index: number) => {
    while (performance.now() < deadline) {
      const vars = newVars(index);
      const key = keys.length > 0 ? keys[nextKey++ % keys.length] : undefined;
      // A sequence started before the deadline runs to its end (the write path's DELETE follows its POST).
      for (const step of steps) {
        const path = typeof step.path === "string" ? step.path : step.path(vars);
        if (path === undefined) break;
        const headers = headersFor(scenario, key, step, vars, index);
        const body = bodyOf(step, vars);
        const sent = performance.now();
        try {
          const keep = step.capture !== undefined || step.answered !== undefined;
          const answer = await request(agent, url, step.method, path, headers, body, keep);
          const done = performance.now();
          out.latencies.push(done - sent);
          if (traced) traced.push({ tag: seeded.tagOf!(vars), sent: origin + sent, done: origin + done });
          out.requests++;
          const code = statusOf(step, answer.status, answer.body);
          out.statusCounts[code] = (out.statusCounts[code] ?? 0) + 1;
          if (answer.status < 200 || answer.status >= 300) out.non2xx++;
          if (step.capture) {
            try {
              step.capture(answer.status, answer.body, vars);
            } catch {
              // leave vars as they are: the next step's path function returns undefined
            }
          }
        } catch {
          out.errors++; // connection error or timeout: count it, pause, and start a new sequence
          await new Promise((resolve) => setTimeout(resolve, 10));
          break;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, connection));
  out.seconds = (performance.now() - start) / 1000;
  const cpuAfter = options.cpu?.();
  out.cpuMs = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
  agent.destroy();
  return out;
}

/** Merges slices: total requests over total time, exact percentiles over every response's latency. */
export function summarize(slices: RawLoad[]): LoadResult {
  const requests = slices.reduce((n, s) => n + s.requests, 0);
  const seconds = slices.reduce((n, s) => n + s.seconds, 0);
  const sorted = Float64Array.from(slices.flatMap((s) => s.latencies)).sort();
  const statusCounts: Record<string, number> = {};
  for (const s of slices)
    for (const [code, n] of Object.entries(s.statusCounts)) statusCounts[code] = (statusCounts[code] ?? 0) + n;
  const cpu = slices.every((s) => s.cpuMs !== undefined) ? slices.reduce((n, s) => n + s.cpuMs!, 0) : undefined;
  return {
    requests,
    ...(cpu !== undefined && requests > 0 ? { cpuMsPerReq: Math.round((cpu / requests) * 1000) / 1000 } : {}),
    seconds: Math.round(seconds * 100) / 100,
    rps: Math.round((requests / seconds) * 10) / 10,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: slices.reduce((n, s) => n + s.errors, 0),
    non2xx: slices.reduce((n, s) => n + s.non2xx, 0),
    statusCounts,
  };
}

/** Sends one request per step, sequentially; returns the response and its body. */
async function send(baseUrl: string, scenario: Scenario, step: Step, key: string | undefined, vars: Vars) {
  const path = typeof step.path === "string" ? step.path : step.path(vars);
  if (path === undefined) return undefined;
  const res = await fetch(baseUrl + path, {
    method: step.method,
    headers: headersFor(scenario, key, step, vars),
    body: bodyOf(step, vars),
  });
  const body = await res.text();
  if (step.capture) {
    try {
      step.capture(res.status, body, vars);
    } catch {
      // as in runLoad
    }
  }
  return { res, body };
}

/**
 * Probes the scenario's endpoint once (first step, first key): 404 means the endpoint does not exist yet. A scenario
 * whose path names seeded ids (`pathFromSeed`) is probed after seeding, with its first step and the seed's first key.
 */
export async function probe(baseUrl: string, scenario: Scenario, key: string | undefined, seeded?: Seeded): Promise<number> {
  const step: Step = seeded
    ? stepsOf(scenario, seeded)[0]!
    : { method: scenario.method, path: scenario.path, body: scenario.body ?? (scenario.method === "GET" ? undefined : {}) };
  const out = await send(baseUrl, scenario, step, seeded ? seeded.keys[0] : key, newVars());
  return out?.res.status ?? 0;
}

/**
 * One request sequence per key (8 at a time) before the warm-up, so per-key first-use work (the app's once-a-minute
 * `last_used_at` update, a rate limiter object's creation) is done before anything is measured: the figures are the
 * steady state. Returns the answers' status counts.
 */
export async function prime(
  baseUrl: string,
  scenario: Scenario,
  seeded: Seeded,
  concurrency = 8,
): Promise<Record<string, number>> {
  const steps = stepsOf(scenario, seeded);
  const statusCounts: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < Math.max(1, seeded.keys.length)) {
      const key = seeded.keys[next++];
      const vars = newVars();
      for (const step of steps) {
        const out = await send(baseUrl, scenario, step, key, vars);
        if (!out) break;
        const code = statusOf(step, out.res.status, out.body);
        statusCounts[code] = (statusCounts[code] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statusCounts;
}

/** The status an answer is counted under: `<status> refused` when its step's `answered` rejects its body. */
const statusOf = (step: Step, status: number, body: string) =>
  step.answered && status >= 200 && status < 300 && !step.answered(body) ? `${status} refused` : String(status);

/** Responses whose status is not in `expected`. */
export const unexpectedIn = (statusCounts: Record<string, number>, expected: number[]) =>
  Object.entries(statusCounts).reduce((n, [code, count]) => (expected.includes(Number(code)) ? n : n + count), 0);

/**
 * `sequences` request sequences on the accounting worker (SERVER_TIMING=on), `concurrency` at a time, after the same
 * sequences once uncounted: the accounting worker is an isolate of its own, and a key's first request there takes the
 * path of a key it has not seen (the per-address count first); the counts are the steady state, as the load's are.
 */
export async function account(
  baseUrl: string,
  scenario: Scenario,
  seeded: Seeded,
  sequences = 20,
  concurrency = 4,
): Promise<Accounting> {
  const steps = stepsOf(scenario, seeded);
  for (let i = 0; i < sequences; i += concurrency) {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, sequences - i) }, async (_, j) => {
        const key = seeded.keys.length > 0 ? seeded.keys[(i + j) % seeded.keys.length] : undefined;
        const vars = newVars(j);
        for (const step of steps) if (!(await send(baseUrl, scenario, step, key, vars))) break;
      }),
    );
  }
  const acc = { requests: 0, statements: 0, doCalls: 0, d1Ms: 0, doMs: 0, appMs: 0, bytes: 0, non2xx: 0, missingHeader: 0 };
  const statusCounts: Record<string, number> = {};
  const perStep = steps.map(() => ({ requests: 0, statements: 0, doCalls: 0 }));
  let next = 0;
  const worker = async (_: unknown, index: number) => {
    while (next < sequences) {
      const key = seeded.keys.length > 0 ? seeded.keys[next % seeded.keys.length] : undefined;
      next++;
      const vars = newVars(index);
      for (const [i, step] of steps.entries()) {
        const out = await send(baseUrl, scenario, step, key, vars);
        if (!out) break;
        acc.requests++;
        acc.bytes += Buffer.byteLength(out.body);
        const code = statusOf(step, out.res.status, out.body);
        statusCounts[code] = (statusCounts[code] ?? 0) + 1;
        if (out.res.status < 200 || out.res.status >= 300) acc.non2xx++;
        const timing = parseServerTiming(out.res.headers.get("server-timing"));
        if (!timing) {
          acc.missingHeader++;
          continue;
        }
        perStep[i]!.requests++;
        perStep[i]!.statements += timing.statements;
        perStep[i]!.doCalls += timing.doCalls;
        acc.statements += timing.statements;
        acc.doCalls += timing.doCalls;
        acc.d1Ms += timing.d1Ms;
        acc.doMs += timing.doMs;
        acc.appMs += timing.appMs;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const counted = Math.max(1, acc.requests - acc.missingHeader);
  const per = (n: number) => Math.round((n / counted) * 100) / 100;
  return {
    requests: acc.requests,
    statementsPerReq: per(acc.statements),
    doCallsPerReq: per(acc.doCalls),
    d1MsPerReq: per(acc.d1Ms),
    doMsPerReq: per(acc.doMs),
    appMsPerReq: per(acc.appMs),
    bytesPerReq: Math.round(acc.bytes / Math.max(1, acc.requests)),
    non2xx: acc.non2xx,
    missingHeader: acc.missingHeader,
    statusCounts,
    ...(steps.length > 1
      ? {
          steps: steps.map((step, i) => {
            const p = perStep[i]!;
            const n = Math.max(1, p.requests);
            return {
              step: `${step.method} ${typeof step.path === "string" ? step.path : step.path({ seq: "0", id: "{id}" })}`,
              requests: p.requests,
              statementsPerReq: Math.round((p.statements / n) * 100) / 100,
              doCallsPerReq: Math.round((p.doCalls / n) * 100) / 100,
            };
          }),
        }
      : {}),
  };
}
