/** What the dashboard's pages are asked: the query strings parsed into plain values, and the links built from them. */
import { describe, expect, it } from "vitest";
import { activityPageOf } from "../../src/dashboard/pages/activity.tsx";
import { csvHref, hrefWith, parseEarningsQuery } from "../../src/dashboard/pages/earnings/query.ts";

describe("the earnings page's query", () => {
  it("reads empty fields as 'any' and the pages as 1", () => {
    const parsed = parseEarningsQuery({ status: "", network: "", paywall: "", tpage: "" });
    expect(parsed).toEqual({ ok: true, query: { tpage: 1, epage: 1 } });
  });

  it("keeps every filter it accepts, the payment trimmed", () => {
    const hash = `0x${"ab".repeat(32)}`;
    const parsed = parseEarningsQuery({
      status: "FAILED",
      network: "base-sepolia",
      protocol: "x402",
      from: "2026-11-01",
      to: "2026-11-01",
      payment: ` ${hash} `,
      epage: "3",
    });
    expect(parsed).toEqual({
      ok: true,
      query: {
        status: "FAILED",
        network: "base-sepolia",
        protocol: "x402",
        from: "2026-11-01",
        to: "2026-11-01",
        payment: hash,
        tpage: 1,
        epage: 3,
      },
    });
  });

  it("names every problem and gives back what was typed, without the pages or overlong text", () => {
    const parsed = parseEarningsQuery({
      status: "SETTLED",
      from: "2026-11-10",
      to: "2026-11-01",
      tpage: "0",
      paywall: "x".repeat(101),
      unknown: "kept out",
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toContain("status:");
    expect(parsed.problems).toContain("tpage:");
    expect(parsed.problems).toContain("paywall:");
    expect(parsed.typed).toEqual({ status: "SETTLED", from: "2026-11-10", to: "2026-11-01" });
  });

  it("refuses a range whose start is after its end", () => {
    const parsed = parseEarningsQuery({ from: "2026-11-10", to: "2026-11-01" });
    expect(parsed.ok || parsed.problems).toBe("from: must not be after to");
  });

  it("links to a page with the same filters, leaving out empty values and first pages", () => {
    const parsed = parseEarningsQuery({ status: "COMPLETED", tpage: "2", epage: "4" });
    if (!parsed.ok) throw new Error("valid query refused");
    expect(hrefWith(parsed.query, { tpage: 3 })).toBe("/dashboard/earnings?status=COMPLETED&tpage=3&epage=4");
    expect(hrefWith(parsed.query, { status: undefined, tpage: 1, epage: 1 })).toBe("/dashboard/earnings");
    expect(csvHref(parsed.query)).toBe("/dashboard/earnings/transactions.csv?status=COMPLETED");
  });
});

describe("the activity page's query", () => {
  it("reads a page number from 1 to 10,000, and anything else as the first page", () => {
    expect(activityPageOf(undefined)).toBe(1);
    expect(activityPageOf("3")).toBe(3);
    expect(activityPageOf("0")).toBe(1);
    expect(activityPageOf("-2")).toBe(1);
    expect(activityPageOf("many")).toBe(1);
    expect(activityPageOf("99999")).toBe(10_000);
  });
});
