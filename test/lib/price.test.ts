import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isValidPrice, MAX_PRICE } from "../../src/core/money/price.ts";

describe("isValidPrice", () => {
  it("the maximum is 1,000,000,000 USDC in micro-units", () => {
    expect(MAX_PRICE).toBe(10n ** 15n);
  });

  it.each(["1", "9", "10", "1000000", "999999999999999", "1000000000000000"])("accepts %j", (price) => {
    expect(isValidPrice(price)).toBe(true);
  });

  it.each([
    "",
    "0",
    "00",
    "01",
    "007",
    "1.5",
    "1.0",
    "1.",
    ".5",
    "-1",
    "+1",
    "1e3",
    "1E3",
    " 1",
    "1 ",
    "1_000",
    "1,000",
    "0x10",
    "١٢",
    "１",
    "1000000000000001",
    "1999999999999999",
    "9999999999999999",
    "10000000000000000",
    "99999999999999999999999999",
    "Infinity",
    "NaN",
  ])("refuses %j", (price) => {
    expect(isValidPrice(price)).toBe(false);
  });

  it("accepts every integer 1..MAX written in canonical decimal", () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: MAX_PRICE }), (n) => isValidPrice(n.toString())));
  });

  it("refuses every integer above MAX and every zero-padded form", () => {
    fc.assert(fc.property(fc.bigInt({ min: MAX_PRICE + 1n, max: 10n ** 40n }), (n) => !isValidPrice(n.toString())));
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: MAX_PRICE }), (n) => !isValidPrice(`0${n}`)));
  });
});
