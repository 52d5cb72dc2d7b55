// The paid scenario's latency without its stand-ins' time: each request measured by the load generator, joined by its
// payment nonce with the stand-in facilitator's and upstream's log (stand-ins.ts), on the clock both share.

/** `other`: any other host (a chain's RPC, say): nothing the bench runs answers it. */
export type StandInCall = "verify" | "settle" | "upstream" | "other";

export interface StandInEntry {
  call: StandInCall;
  /** The payment's EIP-3009 nonce (facilitator: from the payload; upstream: the buyer's `n` query parameter). */
  nonce: string;
  /** The stand-in's handler entered, its response ended (stand-ins.ts `clockMs`, ms). */
  in: number;
  out: number;
}

/** One measured request of the paid scenario: its payment nonce, and when it was sent and fully answered. */
export interface Traced {
  tag: string;
  sent: number;
  done: number;
}

export interface Overhead {
  /** Requests of the load whose three stand-in calls were all found. */
  requests: number;
  latency: { p50: number; p99: number };
  /** The stand-ins' own time per request: the three handlers' time, summed. */
  standIns: { p50: number; p99: number };
  /** Latency minus the stand-ins' own time: the gateway's added latency (network hops to them included). */
  added: { p50: number; p99: number };
  /** Where a request's time goes, between the stand-in calls (p50 and mean, ms). */
  phases: { phase: string; p50: number; mean: number }[];
}

const PHASES = [
  "sent → facilitator /verify (route, paywall read, payment decode and match, credentials decrypted)",
  "/verify answered → upstream called (PENDING transaction + REQUEST event recorded)",
  "upstream answered → facilitator /settle (upstream body read)",
  "/settle answered → response received (COMPLETED + SUCCESS recorded, response built)",
] as const;

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[i]! * 100) / 100;
}
const mean = (values: number[]) =>
  values.length === 0 ? Number.NaN : Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 100) / 100;

/** Joins each traced request with its stand-in calls (by nonce) and splits its latency. */
export function overhead(traced: Traced[], log: StandInEntry[]): Overhead {
  const calls = new Map<string, Partial<Record<StandInCall, StandInEntry>>>();
  for (const entry of log) {
    const key = entry.nonce.toLowerCase();
    calls.set(key, { ...calls.get(key), [entry.call]: entry });
  }
  const latency: number[] = [];
  const standIns: number[] = [];
  const added: number[] = [];
  const phases: number[][] = PHASES.map(() => []);
  for (const t of traced) {
    const c = calls.get(t.tag.toLowerCase());
    if (!c?.verify || !c.upstream || !c.settle) continue;
    const total = t.done - t.sent;
    const own = c.verify.out - c.verify.in + (c.upstream.out - c.upstream.in) + (c.settle.out - c.settle.in);
    latency.push(total);
    standIns.push(own);
    added.push(total - own);
    phases[0]!.push(c.verify.in - t.sent);
    phases[1]!.push(c.upstream.in - c.verify.out);
    phases[2]!.push(c.settle.in - c.upstream.out);
    phases[3]!.push(t.done - c.settle.out);
  }
  const pair = (v: number[]) => ({ p50: percentile(v, 50), p99: percentile(v, 99) });
  return {
    requests: latency.length,
    latency: pair(latency),
    standIns: pair(standIns),
    added: pair(added),
    phases: PHASES.map((phase, i) => ({ phase, p50: percentile(phases[i]!, 50), mean: mean(phases[i]!) })),
  };
}
