import { describe, expect, it } from "vitest";
import { cronMatches, parseCron } from "../../src/lib/cron.ts";

const at = (iso: string) => new Date(iso);
const fires = (expression: string, iso: string) => cronMatches(parseCron(expression), at(iso));

describe("cron schedules (the dev runner's reading of wrangler.toml's crons)", () => {
  it("every five minutes fires on the minutes divisible by five, in UTC", () => {
    expect(fires("*/5 * * * *", "2026-11-27T22:05:00Z")).toBe(true);
    expect(fires("*/5 * * * *", "2026-11-27T22:00:59Z")).toBe(true);
    expect(fires("*/5 * * * *", "2026-11-27T22:06:00Z")).toBe(false);
    const minutes = [...parseCron("*/5 * * * *").minutes];
    expect(minutes).toEqual([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55]);
  });

  it("a fixed minute fires once an hour", () => {
    expect(fires("17 * * * *", "2026-11-27T03:17:00Z")).toBe(true);
    expect(fires("17 * * * *", "2026-11-27T03:18:00Z")).toBe(false);
    expect(fires("17 * * * *", "2026-11-27T03:16:00Z")).toBe(false);
  });

  it("ranges, steps, lists and names", () => {
    expect([...parseCron("0 9-17/4 * * *").hours]).toEqual([9, 13, 17]);
    expect([...parseCron("1,2,10-12 * * * *").minutes]).toEqual([1, 2, 10, 11, 12]);
    expect([...parseCron("0 0 * JAN-MAR *").months]).toEqual([1, 2, 3]);
    // 2026-11-27 is a Friday; 7 is Sunday as 0 is.
    expect(fires("0 12 * * FRI", "2026-11-27T12:00:00Z")).toBe(true);
    expect(fires("0 12 * * MON", "2026-11-27T12:00:00Z")).toBe(false);
    expect(fires("0 0 * * 7", "2026-11-29T00:00:00Z")).toBe(true);
  });

  it("a restricted day of month and day of week: either is enough", () => {
    expect(fires("0 0 1 * MON", "2026-11-01T00:00:00Z")).toBe(true); // the 1st, a Sunday
    expect(fires("0 0 1 * MON", "2026-11-02T00:00:00Z")).toBe(true); // a Monday
    expect(fires("0 0 1 * MON", "2026-11-03T00:00:00Z")).toBe(false);
    expect(fires("0 0 1 * *", "2026-11-02T00:00:00Z")).toBe(false);
  });

  it("refuses what it cannot read, naming it", () => {
    expect(() => parseCron("* * * *")).toThrow(/expected 5 fields/);
    expect(() => parseCron("60 * * * *")).toThrow(/"60"/);
    expect(() => parseCron("*/0 * * * *")).toThrow(/"\*\/0"/);
    expect(() => parseCron("5-1 * * * *")).toThrow(/"5-1"/);
    expect(() => parseCron("@hourly * * * *")).toThrow();
  });
});
