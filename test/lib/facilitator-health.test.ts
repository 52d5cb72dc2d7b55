import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/core/config.ts";
import { appendOutcome, type CallOutcome, displayUrl, HEALTH_WINDOW, rank, summarize } from "../../src/lib/facilitator-health.ts";

const A = "https://a.example/x402";
const B = "https://b.example";
const C = "https://c.example";

const calls = (url: string, ...specs: (number | "timeout" | "unreachable")[]): CallOutcome[] =>
  specs.map((spec, i) =>
    typeof spec === "number" ? { url, at: 1_000 + i, ms: spec } : { url, at: 1_000 + i, ms: 5_000, failure: spec },
  );

const healthOf = (outcomes: Record<string, CallOutcome[]>) =>
  new Map(Object.entries(outcomes).map(([url, recent]) => [url, summarize(url, recent)]));

describe("summarize", () => {
  it("no call yet: unknown, no latency", () => {
    expect(summarize(A, [])).toEqual({ url: A, status: "unknown", calls: 0, failures: 0, latencyMs: null, lastFailure: null });
  });

  it("the latest call decides the status; the median of the answered calls is the latency", () => {
    expect(summarize(A, calls(A, 100, 300, "timeout", 200))).toEqual({
      url: A,
      status: "ok",
      calls: 4,
      failures: 1,
      latencyMs: 200,
      lastFailure: { at: new Date(1_002).toISOString(), failure: "timeout" },
    });
    expect(summarize(A, calls(A, 100, "unreachable"))).toMatchObject({ status: "failing", failures: 1, latencyMs: 100 });
  });

  it("keeps the newest HEALTH_WINDOW outcomes, in time order", () => {
    let recent: CallOutcome[] = [];
    for (let i = 0; i < HEALTH_WINDOW + 5; i++) recent = appendOutcome(recent, { url: A, at: 10_000 - i, ms: i });
    expect(recent).toHaveLength(HEALTH_WINDOW);
    expect(recent.map((o) => o.at)).toEqual([...recent.map((o) => o.at)].sort((a, b) => a - b));
    expect(recent.at(-1)?.at).toBe(10_000);
  });
});

describe("rank", () => {
  it("unknown health keeps the configured order", () => {
    expect(rank([A, B, C], new Map())).toEqual([A, B, C]);
  });

  it("answered first, the fastest first; failing last, the least recently failed first", () => {
    const health = healthOf({
      [A]: calls(A, 100, "timeout"),
      [B]: calls(B, 400),
      [C]: calls(C, 50),
    });
    expect(rank([A, B, C], health)).toEqual([C, B, A]);
    const bothFailing = healthOf({
      [A]: [{ url: A, at: 2_000, ms: 1, failure: "unreachable" }],
      [B]: [{ url: B, at: 1_000, ms: 1, failure: "unreachable" }],
    });
    expect(rank([A, B], bothFailing)).toEqual([B, A]);
  });

  it("a facilitator never called is tried before a measured one", () => {
    expect(rank([A, B], healthOf({ [A]: calls(A, 100) }))).toEqual([B, A]);
  });
});

describe("displayUrl", () => {
  it("drops credentials, the query and a trailing slash", () => {
    expect(displayUrl("https://user:secret@f.example/v2/?key=abc")).toBe("https://f.example/v2");
    expect(displayUrl("not a url")).toBe("(invalid URL)");
  });
});

describe("the facilitator vars", () => {
  it("FACILITATOR_URLS_<MODE> lists several; unset, the single FACILITATOR_URL_<MODE> stands", () => {
    const config = getConfig({
      FACILITATOR_URLS_TESTNET: ` ${A} , ${B} `,
      FACILITATOR_URL_TESTNET: C,
      FACILITATOR_URL_MAINNET: C,
    });
    expect(config.facilitatorUrls).toEqual({ testnet: [A, B], mainnet: [C] });
    expect(config.facilitatorUrl).toEqual({ testnet: A, mainnet: C });
    expect(getConfig({}).facilitatorVerifyTimeoutMs).toBe(5_000);
  });

  it("refuses an entry that is not a URL, at the first request", () => {
    expect(() => getConfig({ FACILITATOR_URLS_MAINNET: `${A},facilitator` })).toThrow();
  });
});
