import { describe, expect, it } from "vitest";
import { formatUsdc, formatUsdcShort } from "../../src/core/money/usdc.ts";

describe("formatUsdc", () => {
  it("shows integer micro-USDC with six decimals, digit by digit", () => {
    expect(formatUsdc("12345678")).toBe("12.345678");
    expect(formatUsdc("0")).toBe("0.000000");
    expect(formatUsdc("1")).toBe("0.000001");
    expect(formatUsdc("1000000")).toBe("1.000000");
    expect(formatUsdc(-5n)).toBe("-0.000005");
    expect(formatUsdc("1234567000000")).toBe("1,234,567.000000");
  });

  it("keeps every digit past 2^53 (no floating point)", () => {
    expect(formatUsdc("29999999999999997")).toBe("29,999,999,999.999997");
    expect(formatUsdc(9_223_372_036_854_775_807n)).toBe("9,223,372,036,854.775807");
  });

  it("shortens axis labels by dropping the fraction's trailing zeros", () => {
    expect(formatUsdcShort("10000")).toBe("0.01");
    expect(formatUsdcShort("0")).toBe("0");
    expect(formatUsdcShort("5000000")).toBe("5");
    expect(formatUsdcShort("100000000")).toBe("100");
    expect(formatUsdcShort("2500001")).toBe("2.500001");
  });
});

describe("formatCount", () => {
  it("groups digits by three without Intl", async () => {
    const { formatCount } = await import("../../src/lib/digits.ts");
    expect(formatCount(0)).toBe("0");
    expect(formatCount(999)).toBe("999");
    expect(formatCount(1000)).toBe("1,000");
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(-1234)).toBe("-1,234");
  });
});
