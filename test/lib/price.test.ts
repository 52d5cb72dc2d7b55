import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  depositProblem,
  isValidPrice,
  MAX_PRICE,
  MAX_SESSION_DEPOSIT,
  PRICE_RULE,
  priceNumberProblem,
  priceProblem,
} from "../../src/core/money/price.ts";
import { usdcDecimal } from "../../src/core/money/usdc.ts";

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

describe("priceProblem and priceNumberProblem", () => {
  it("a canonical price has no problem", () => {
    expect(priceProblem("10000")).toBeNull();
  });

  it.each([
    ["0.01", "10000"],
    ["1.5", "1500000"],
    ["1,000.25", "1000250000"],
  ])("decimal USDC %j names the micro-USDC string %j", (text, micro) => {
    expect(priceProblem(text)).toBe(`${PRICE_RULE}; for ${usdcDecimal(micro)} USDC send "${micro}"`);
  });

  it.each(["0", "01", "0.0000001", "0.0", "abc", "1e3", "1000000000000001"])("%j gets the rule alone", (text) => {
    expect(priceProblem(text)).toBe(PRICE_RULE);
  });

  it("a JSON number names the string to send; other types keep the schema's message", () => {
    expect(priceNumberProblem(10000)).toBe('Must be a string: send "10000"');
    expect(priceNumberProblem(0.01)).toBe(`Must be a string. ${PRICE_RULE}; for 0.01 USDC send "10000"`);
    expect(priceNumberProblem(1e-7)).toBe(`Must be a string. ${PRICE_RULE}`);
    expect(priceNumberProblem(true)).toBeUndefined();
    expect(priceNumberProblem(undefined)).toBeUndefined();
  });
});

describe("depositProblem: a session's minimum deposit", () => {
  it("the cap is 1,000,000 USDC in micro-units", () => {
    expect(MAX_SESSION_DEPOSIT).toBe(10n ** 12n);
  });

  it.each(["1", "10000", "1000000000000"])("accepts %j", (value) => {
    expect(depositProblem(value)).toBeNull();
  });

  it.each(["", "0", "01", "1.5", "-1", "1e6", " 1", "1000000000001", "10000000000000"])("refuses %j", (value) => {
    expect(depositProblem(value)).toMatch(/^Integer micro-USDC/);
  });

  it("answers a USDC decimal with the micro-units to send, only within the cap", () => {
    expect(depositProblem("2.5")).toMatch(/; for 2\.5 USDC send "2500000"$/);
    expect(depositProblem("2000000.5")).not.toMatch(/send/);
  });
});
