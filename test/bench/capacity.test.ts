// The capacity model of docs/scale.md: its arithmetic, and the verdicts the document quotes.
import { describe, expect, it } from "vitest";
import { breaksFirst, LOAD, PAID_REQUEST, simulate, stateReadsPerSecond, VARIANTS } from "./capacity.ts";

const byName = (name: string) => VARIANTS.find((v) => v.name.startsWith(name))!.load;

describe("the capacity model", () => {
  it("as designed, no component is above half its limit at 10,000 paid requests/s over 10,000 tenants", () => {
    const rows = simulate(PAID_REQUEST, byName("the design"));
    expect(rows.map((r) => r.utilisation).every((u) => u <= 0.5)).toBe(true);
    expect(rows.find((r) => r.component.startsWith("D1 primary"))!.utilisation).toBeCloseTo(0.4383, 3);
  });

  it("one D1 database for the read model is above half, and breaks first", () => {
    const load = byName("one D1 database");
    const rows = simulate(PAID_REQUEST, load);
    const d1 = rows.find((r) => r.component.startsWith("D1 primary"))!;
    // 500 statements × 1 ms + 90,000 rows × 0.004 ms + 50 reads / 6 copies × 1 ms per second.
    expect(d1.used).toBeCloseTo(500 + 360 + 50 / 6, 6);
    expect(breaksFirst(rows, load)).toEqual({ component: d1.component, atRps: 11_516 });
  });

  it("the per-URL state check reads about once per request when each isolate sees a URL rarely", () => {
    const perUrl = { ...LOAD, stateCheck: "per-url" as const };
    // The long tail: 9,000 req/s over 9,999 tenants and 100 isolates, 0.009 req/s per (isolate, URL): nearly every request reads.
    expect(stateReadsPerSecond(perUrl)).toBeGreaterThan(8800);
    // One hot URL seen by one isolate at 100 req/s with a 2 s bound: one read per 201 requests.
    const hot = { ...perUrl, rps: 100, tenants: 1, busiestTenantShare: 1, isolates: 1 };
    expect(stateReadsPerSecond(hot)).toBeCloseTo(100 / 201, 6);
    // The version map: one read per isolate per bound, whatever the URLs.
    expect(stateReadsPerSecond(LOAD)).toBe(50);
  });

  it("a payment's object takes its own payment's calls, whatever the busiest tenant or buyer sends", () => {
    const skewed = { ...LOAD, busiestTenantShare: 0.9, busiestBuyerShare: 0.9 };
    expect(simulate(PAID_REQUEST, skewed).find((r) => r.component.startsWith("payment Durable Object"))!.used).toBe(
      PAID_REQUEST.paymentObjectCalls,
    );
  });
});
