// The SVG charts as pure functions of the daily roll-ups: what a reader sees (bars, points, labels, the table,
// the summary), with exact amounts.
import { describe, expect, it } from "vitest";
import { barHeight, niceCeiling, PLOT, RevenueChart, shortDay, TrafficChart } from "../../src/dashboard/charts.tsx";
import type { DayStats } from "../../src/db/daily-stats.ts";
import { lastUtcDays } from "../../src/lib/utc-days.ts";

const days = (overrides: Record<number, Partial<DayStats>> = {}): DayStats[] =>
  lastUtcDays(new Date("2026-11-22T12:00:00Z"), 30).map((day, i) => ({
    day,
    revenue: "0",
    requests: 0,
    successes: 0,
    errors: 0,
    ...overrides[i],
  }));

const render = async (node: unknown) => String(await (node as { toString(): string | Promise<string> }).toString());
const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
const tags = (svg: string, name: string) => svg.match(new RegExp(`<${name}\\b[^>]*>`, "g")) ?? [];

describe("axis helpers", () => {
  it("round the top of the axis up to 1, 2 or 5 × 10^k, never below the floor", () => {
    expect(niceCeiling(0n, 10_000n)).toBe(10_000n);
    expect(niceCeiling(10_001n, 10_000n)).toBe(20_000n);
    expect(niceCeiling(3_450_000n, 10_000n)).toBe(5_000_000n);
    expect(niceCeiling(7n, 10n)).toBe(10n);
    expect(niceCeiling(51n, 10n)).toBe(100n);
    // Beyond 2^53, exactly.
    expect(niceCeiling(29_999_999_999_999_997n, 1n)).toBe(50_000_000_000_000_000n);
  });

  it("scale heights with bigint arithmetic", () => {
    expect(barHeight(0n, 100n)).toBe(0);
    expect(barHeight(-5n, 100n)).toBe(0);
    expect(barHeight(100n, 100n)).toBe(PLOT.height);
    expect(barHeight(50n, 100n)).toBe(PLOT.height / 2);
    expect(barHeight(29_999_999_999_999_997n, 50_000_000_000_000_000n)).toBe(Math.floor((PLOT.height * 3) / 5)); // 0.59999… of the plot, rounded down
  });

  it("names days shortly", () => {
    expect(shortDay("2026-11-02")).toBe("2 Nov");
    expect(shortDay("2027-01-31")).toBe("31 Jan");
  });
});

describe("RevenueChart", () => {
  it("draws one bar per day with revenue, taller for more, each with its exact amount; empty days have none", async () => {
    const html = await render(
      RevenueChart({ id: "rev", days: days({ 3: { revenue: "1500000" }, 29: { revenue: "3000000" }, 10: { revenue: "1" } }) }),
    );
    const bars = tags(html, "rect");
    expect(bars.map((b) => attr(b, "data-day"))).toEqual(["2026-10-27", "2026-11-03", "2026-11-22"]);
    const height = (day: string) => Number(attr(bars.find((b) => attr(b, "data-day") === day)!, "height"));
    expect(height("2026-11-22")).toBe(2 * height("2026-10-27"));
    expect(height("2026-11-03")).toBe(1); // a single micro-USDC still shows
    // Bars stand on the axis, left to right in day order.
    const xs = bars.map((b) => Number(attr(b, "x")));
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
    for (const b of bars) expect(Number(attr(b, "y")) + Number(attr(b, "height"))).toBe(PLOT.baseline);
    expect(html).toContain("<title>2026-11-22: 3.00 USDC</title>");
    expect(html).toContain("<title>2026-11-03: 0.000001 USDC</title>");
    // Axis: 0, half and top, in USDC.
    expect(html).toMatch(/>0<\/text>.*>2.5<\/text>.*>5<\/text>/s);
  });

  it("has an accessible name, a summary and a table of every day, empty days included", async () => {
    const html = await render(RevenueChart({ id: "rev", days: days({ 5: { revenue: "29999999999999997" } }) }));
    expect(html).toMatch(/<svg[^>]*role="img"[^>]*aria-labelledby="rev-title"[^>]*aria-describedby="rev-summary"/);
    expect(html).toContain('<figcaption id="rev-title">Revenue per day (completed transactions, USDC)</figcaption>');
    expect(html).toMatch(
      /<desc>Total 29,999,999,999.999997 USDC from 2026-10-24 to 2026-11-22; highest 29,999,999,999.999997 USDC on 2026-10-29; 29 of 30 days without revenue.<\/desc>/,
    );
    expect(html).toContain('id="rev-summary"');
    const rows = html.match(/<tr><th scope="row">[^<]*<\/th><td>[^<]*<\/td><\/tr>/g) ?? [];
    expect(rows).toHaveLength(30);
    expect(rows[0]).toBe('<tr><th scope="row">2026-10-24</th><td>0.00</td></tr>');
    expect(rows[5]).toBe('<tr><th scope="row">2026-10-29</th><td>29,999,999,999.999997</td></tr>');
  });

  it("renders an empty month as an axis with no bars", async () => {
    const html = await render(RevenueChart({ id: "rev", days: days() }));
    expect(tags(html, "rect")).toEqual([]);
    expect(html).toContain("Total 0.00 USDC from 2026-10-24 to 2026-11-22; 30 of 30 days without revenue.");
  });
});

describe("TrafficChart", () => {
  it("draws a line per series through every day, zeros on the axis, with points and tooltips", async () => {
    const html = await render(
      TrafficChart({
        id: "traffic",
        days: days({ 28: { requests: 40, successes: 30, errors: 10 }, 29: { requests: 20, successes: 20, errors: 0 } }),
      }),
    );
    const lines = tags(html, "polyline");
    expect(lines).toHaveLength(3);
    const points = (line: string) =>
      attr(line, "points")!
        .split(" ")
        .map((p) => p.split(",").map(Number));
    const [requests, successes, errors] = lines.map(points);
    for (const series of [requests!, successes!, errors!]) expect(series).toHaveLength(30);
    const base = PLOT.baseline;
    expect(requests![0]![1]).toBe(base);
    expect(requests![28]![1]).toBeLessThan(successes![28]![1]!); // 40 above 30
    expect(errors![29]![1]).toBe(base);
    // Different dash patterns: the lines differ without colour.
    expect(new Set(lines.map((l) => attr(l, "stroke-dasharray") ?? "solid")).size).toBe(3);
    expect(html).toContain("<title>2026-11-21: 40 requests, 30 successes, 10 errors</title>");
    expect(html).toContain("<title>2026-10-24: 0 requests, 0 successes, 0 errors</title>");
    // A dot per day on each line.
    const dots = tags(html, "path").map((p) => attr(p, "d")!.split("M").length - 1);
    expect(dots).toEqual([30, 30, 30]);
    expect(html).toContain(
      "From 2026-10-24 to 2026-11-22: 60 requests, 50 successes, 10 errors; busiest day 2026-11-21 with 40 requests.",
    );
    const rows = html.match(/<tr><th scope="row">[^<]*<\/th>(<td>[^<]*<\/td>){3}<\/tr>/g) ?? [];
    expect(rows).toHaveLength(30);
    expect(rows[28]).toBe('<tr><th scope="row">2026-11-21</th><td>40</td><td>30</td><td>10</td></tr>');
  });
});
