// Facilitators' health reaches the mode's shared object in batches: an isolate sends the outcomes of each
// REPORT_BATCH_MS in one call, and an outcome reported while a batch is on its way is sent with the next one.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { REPORT_BATCH_MS, reportOutcome } from "../../src/core/facilitators/health.ts";
import type { CallOutcome } from "../../src/lib/facilitator-health.ts";

type HealthStub = { report(o: CallOutcome[]): Promise<void>; outcomes(urls: string[]): Promise<Record<string, CallOutcome[]>> };

/**
 * The real FACILITATOR_HEALTH namespace, with every `report` call counted; `during`, when given, runs while the
 * first call is on its way (before it reaches the object).
 */
function countingHealth(during?: () => void) {
  const reports: CallOutcome[][] = [];
  const real = env.FACILITATOR_HEALTH;
  const namespace = {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = real.get(id) as unknown as HealthStub;
      return {
        report: async (outcomes: CallOutcome[]) => {
          reports.push(outcomes);
          if (reports.length === 1) during?.();
          return stub.report(outcomes);
        },
        outcomes: (urls: string[]) => stub.outcomes(urls),
      };
    },
  };
  return { env: { ...env, FACILITATOR_HEALTH: namespace } as unknown as Env, reports };
}

/** A `waitUntil` that keeps what it is given, to wait for it. */
function background() {
  const work: Promise<unknown>[] = [];
  return { waitUntil: (p: Promise<unknown>) => void work.push(p), done: () => Promise.all(work) };
}

const shared = async (url: string) => {
  const stub = env.FACILITATOR_HEALTH.get(env.FACILITATOR_HEALTH.idFromName("mainnet")) as unknown as HealthStub;
  return (await stub.outcomes([url]))[url];
};

describe("facilitators' health, shared", () => {
  it("the outcomes of one interval reach the shared health in one call, each facilitator's newest 20", async () => {
    const url = `https://batch-${crypto.randomUUID()}.facilitator.test`;
    const other = `https://batch-other-${crypto.randomUUID()}.facilitator.test`;
    const counting = countingHealth();
    const ctx = background();
    const at = Date.now();
    for (let i = 0; i < 25; i++) reportOutcome(counting.env, ctx, "mainnet", { url, at: at + i, ms: i });
    reportOutcome(counting.env, ctx, "mainnet", { url: other, at, ms: 7, failure: "timeout" });
    await ctx.done();
    expect(counting.reports).toHaveLength(1);
    expect((await shared(url))?.map((o) => o.ms)).toEqual(Array.from({ length: 20 }, (_, i) => i + 5));
    expect(await shared(other)).toEqual([{ url: other, at, ms: 7, failure: "timeout" }]);
  });

  it("an outcome reported while a batch is on its way reaches the shared health with the next one", async () => {
    const url = `https://late-${crypto.randomUUID()}.facilitator.test`;
    const ctx = background();
    const at = Date.now();
    const counting = countingHealth(() => reportOutcome(counting.env, ctx, "mainnet", { url, at: at + 1, ms: 2 }));
    const started = Date.now();
    reportOutcome(counting.env, ctx, "mainnet", { url, at, ms: 1 });
    await ctx.done();
    await ctx.done(); // the second batch, scheduled while the first was sent
    expect(counting.reports.map((r) => r.map((o) => o.ms))).toEqual([[1], [2]]);
    expect((await shared(url))?.map((o) => o.ms)).toEqual([1, 2]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * REPORT_BATCH_MS);
  });
});
