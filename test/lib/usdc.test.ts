import { describe, expect, it } from "vitest";
import { formatUsdc, formatUsdcAmount, formatUsdcShort, parseUsdc } from "../../src/core/money/usdc.ts";

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

  it("shows amounts to people with at least two decimals and every digit the amount needs, never rounded", () => {
    expect(formatUsdcAmount("10000")).toBe("0.01");
    expect(formatUsdcAmount("1500")).toBe("0.0015");
    expect(formatUsdcAmount("0")).toBe("0.00");
    expect(formatUsdcAmount("1")).toBe("0.000001");
    expect(formatUsdcAmount("1000000")).toBe("1.00");
    expect(formatUsdcAmount("1500000")).toBe("1.50");
    expect(formatUsdcAmount("12345678")).toBe("12.345678");
    expect(formatUsdcAmount("1234567000000")).toBe("1,234,567.00");
    expect(formatUsdcAmount("100100000")).toBe("100.10");
    expect(formatUsdcAmount(-5n)).toBe("-0.000005");
    expect(formatUsdcAmount("29999999999999997")).toBe("29,999,999,999.999997");
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

describe("parseUsdc", () => {
  it("turns a typed USDC amount into integer micro-USDC, digit by digit", () => {
    expect(parseUsdc("0.01")).toBe("10000");
    expect(parseUsdc("1")).toBe("1000000");
    expect(parseUsdc(".5")).toBe("500000");
    expect(parseUsdc("12.")).toBe("12000000");
    expect(parseUsdc(" 1,000.000001 ")).toBe("1000000001");
    expect(parseUsdc("0")).toBe("0");
    expect(parseUsdc("000.000001")).toBe("1");
    // Past 2^53 micro-units, every digit stays.
    expect(parseUsdc("999999999999.999999")).toBe("999999999999999999");
  });

  it("refuses anything but a plain non-negative decimal with at most six decimals", () => {
    for (const bad of ["", ".", "0.0000001", "-1", "+1", "1e3", "0x10", "1.2.3", "one", "1 000", "∞", "NaN"]) {
      expect(parseUsdc(bad), bad).toBeNull();
    }
  });

  it("round-trips with formatUsdc", () => {
    for (const micro of ["1", "10000", "123456789", "1000000000000000"]) expect(parseUsdc(formatUsdc(micro))).toBe(micro);
  });
});
