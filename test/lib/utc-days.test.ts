import { describe, expect, it } from "vitest";
import { lastUtcDays, utcDay } from "../../src/lib/utc-days.ts";

describe("UTC days", () => {
  it("names the UTC date of an instant, whatever the local clock says", () => {
    expect(utcDay(new Date("2026-11-22T23:59:59.999Z"))).toBe("2026-11-22");
    expect(utcDay(new Date("2026-11-23T00:30:00+02:00"))).toBe("2026-11-22");
  });

  it("lists the last n days, oldest first, across month and year ends", () => {
    expect(lastUtcDays(new Date("2027-01-02T00:00:00Z"), 4)).toEqual(["2026-12-30", "2026-12-31", "2027-01-01", "2027-01-02"]);
    expect(lastUtcDays(new Date("2028-03-01T12:00:00Z"), 2)).toEqual(["2028-02-29", "2028-03-01"]);
    const thirty = lastUtcDays(new Date("2026-11-22T10:00:00Z"), 30);
    expect(thirty).toHaveLength(30);
    expect(thirty[0]).toBe("2026-10-24");
    expect(thirty.at(-1)).toBe("2026-11-22");
  });
});
