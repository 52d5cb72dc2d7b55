/**
 * A facilitator's health from its recent calls (docs/gateway.md, "Facilitators"): each verify or settle the gateway
 * made is one outcome (answered or failed, and how long it took); the newest `HEALTH_WINDOW` outcomes of each
 * facilitator are what its health says.
 */

/** How a call ended, as the gateway saw it: never the facilitator's own text. */
export type CallFailure = "timeout" | "unreachable" | "error_status" | "invalid_answer";

export interface CallOutcome {
  url: string;
  /** When the call ended (ms since the epoch). */
  at: number;
  /** Whole milliseconds the call took. */
  ms: number;
  /** Absent: the facilitator answered (whatever it said about the payment). */
  failure?: CallFailure;
}

export interface FacilitatorHealth {
  url: string;
  /**
   * `ok`: its latest call was answered; `failing`: its latest call failed; `unknown`: no call seen yet (a facilitator
   * that failed is tried again, last, so a recovered one is seen answering).
   */
  status: "ok" | "failing" | "unknown";
  /** Calls in the window, and how many of them failed. */
  calls: number;
  failures: number;
  /** Median duration of the window's answered calls (ms); `null` without any. */
  latencyMs: number | null;
  lastFailure: { at: string; failure: CallFailure } | null;
}

/** Outcomes kept per facilitator. */
export const HEALTH_WINDOW = 20;

/** Appends `outcome` to a facilitator's recent outcomes, keeping the newest `HEALTH_WINDOW`. */
export const appendOutcome = (recent: CallOutcome[], outcome: CallOutcome): CallOutcome[] =>
  [...recent, outcome].sort((a, b) => a.at - b.at).slice(-HEALTH_WINDOW);

export function summarize(url: string, recent: CallOutcome[]): FacilitatorHealth {
  const answered = recent
    .filter((o) => !o.failure)
    .map((o) => o.ms)
    .sort((a, b) => a - b);
  const failed = recent.filter((o) => o.failure);
  const latest = recent.at(-1);
  const lastFailure = failed.at(-1);
  return {
    url,
    status: !latest ? "unknown" : latest.failure ? "failing" : "ok",
    calls: recent.length,
    failures: failed.length,
    latencyMs: answered.length > 0 ? (answered[Math.floor((answered.length - 1) / 2)] ?? null) : null,
    lastFailure: lastFailure?.failure ? { at: new Date(lastFailure.at).toISOString(), failure: lastFailure.failure } : null,
  };
}

/**
 * The order to ask facilitators in: those whose latest call did not fail first (the faster by median latency first;
 * one not seen yet counts as fastest, so it is tried and measured), those whose latest call failed last (the least
 * recently failed first). The sort is stable: equal facilitators keep the configured order.
 */
export function rank(urls: string[], health: Map<string, FacilitatorHealth>): string[] {
  const key = (url: string) => {
    const h = health.get(url);
    return { failing: h?.status === "failing", latency: h?.latencyMs ?? 0, failedAt: h?.lastFailure?.at ?? "" };
  };
  return [...urls].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x.failing !== y.failing) return x.failing ? 1 : -1;
    if (x.failing) return x.failedAt < y.failedAt ? -1 : x.failedAt > y.failedAt ? 1 : 0;
    return x.latency - y.latency;
  });
}

/** A facilitator URL as shown to operators: scheme, host and path only (never credentials or a query string). */
export function displayUrl(url: string): string {
  const parsed = URL.parse(url);
  return parsed ? `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}` : "(invalid URL)";
}
