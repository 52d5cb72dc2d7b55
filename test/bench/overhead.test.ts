// The paid scenario's figures: a request's latency minus its stand-ins' own time, and the phases between their calls.
import { describe, expect, it } from "vitest";
import { overhead, type StandInEntry, type Traced } from "./overhead.ts";

/** One paid request sent at `t`: /verify, upstream and /settle each taking `own` ms in the stand-in. */
function paid(nonce: string, t: number, own: number): { traced: Traced; log: StandInEntry[] } {
  return {
    traced: { tag: nonce, sent: t, done: t + 20 + 3 * own },
    log: [
      { call: "verify", nonce, in: t + 4, out: t + 4 + own },
      { call: "upstream", nonce, in: t + 10 + own, out: t + 10 + 2 * own },
      { call: "settle", nonce, in: t + 12 + 2 * own, out: t + 12 + 3 * own },
    ],
  };
}

describe("overhead", () => {
  it("subtracts each request's own stand-in time and splits the rest between the calls", () => {
    const a = paid("0xAA", 1000, 1);
    const b = paid("0xbb", 2000, 2);
    // The log comes back in any order, in either letter case, and with calls of requests the load did not measure.
    const log = [
      ...b.log.map((e) => ({ ...e, nonce: "0xBB" })),
      ...a.log.reverse().map((e) => ({ ...e, nonce: "0xaa" })),
      ...paid("0xcc", 3000, 5).log,
    ];
    const o = overhead([a.traced, b.traced], log);
    expect(o.requests).toBe(2);
    expect(o.latency).toEqual({ p50: 23, p99: 26 });
    expect(o.standIns).toEqual({ p50: 3, p99: 6 });
    expect(o.added).toEqual({ p50: 20, p99: 20 });
    expect(o.phases.map((p) => p.mean)).toEqual([4, 6, 2, 8]);
  });

  it("leaves out a request whose stand-in calls are not all logged, rather than counting it without them", () => {
    const a = paid("0x01", 0, 1);
    const b = paid("0x02", 100, 1);
    const o = overhead([a.traced, b.traced], [...a.log, ...b.log.filter((e) => e.call !== "settle")]);
    expect(o.requests).toBe(1);
    expect(o.added.p99).toBe(20);
  });
});
