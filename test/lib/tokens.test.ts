// The per-token arithmetic of the dashboard's revenue: which networks a filter names, and per-network sums added
// per token (never two tokens together), exact past 2^53.
import { describe, expect, it } from "vitest";
import {
  chartToken,
  daysInToken,
  networksMatching,
  protocolOf,
  revenueInToken,
  sumsPerToken,
  sumsSince,
} from "../../src/core/money/tokens.ts";

describe("tokens", () => {
  it("names the networks of a network, a protocol, both or neither", () => {
    expect(networksMatching({})).toHaveLength(7);
    expect(networksMatching({ protocol: "mpp" })).toEqual(["tempo-testnet", "tempo"]);
    expect(networksMatching({ protocol: "x402" })).not.toContain("tempo-testnet");
    expect(networksMatching({ protocol: "x402" })).toEqual([
      "arc-testnet",
      "base-sepolia",
      "hyperevm-testnet",
      "base",
      "hyperevm",
    ]);
    expect(networksMatching({ network: "base-sepolia" })).toEqual(["base-sepolia"]);
    expect(networksMatching({ network: "base-sepolia", protocol: "mpp" })).toEqual([]);
    expect(protocolOf("tempo")).toBe("mpp");
    expect(protocolOf("base")).toBe("x402");
  });

  it("adds networks of one token, never two tokens, every digit kept", () => {
    expect(
      sumsPerToken([
        { network: "base-sepolia", sums: ["9007199254740993", "1"] },
        { network: "arc-testnet", sums: ["7", "2"] },
        { network: "tempo-testnet", sums: ["5", "0"] },
        { network: "tempo", sums: ["1", "1"] },
      ]),
    ).toEqual([
      { currency: "USDC", sums: ["9007199254741001", "4"] },
      { currency: "pathUSD", sums: ["5", "0"] },
    ]);
    expect(sumsPerToken([])).toEqual([]);
  });

  it("charts the token that earned most in the window, USDC when none did; a day adds that token's networks only", () => {
    const totals = [
      { currency: "USDC" as const, sums: ["0", "5"] },
      { currency: "pathUSD" as const, sums: ["3", "4"] },
    ];
    expect(chartToken(totals, 0)).toBe("pathUSD");
    expect(chartToken(totals, 1)).toBe("USDC");
    expect(chartToken([], 0)).toBe("USDC");
    const rows = [
      { day: "2026-11-01", network: "base-sepolia", amount: "9007199254740993" },
      { day: "2026-11-01", network: "arc-testnet", amount: "1" },
      { day: "2026-11-01", network: "tempo-testnet", amount: "7" },
      { day: "2026-11-02", network: "tempo-testnet", amount: "2" },
    ];
    expect([...revenueInToken(rows, "USDC")]).toEqual([["2026-11-01", "9007199254740994"]]);
    expect([...revenueInToken(rows, "pathUSD")]).toEqual([
      ["2026-11-01", "7"],
      ["2026-11-02", "2"],
    ]);
  });

  it("sums each network's days since each window's first day, every digit kept, networks in code-point order", () => {
    const rows = [
      { day: "2026-10-01", network: "tempo-testnet", amount: "5" },
      { day: "2026-11-20", network: "base-sepolia", amount: "9007199254740993" },
      { day: "2026-11-27", network: "base-sepolia", amount: "1" },
      { day: "2026-11-27", network: "arc-testnet", amount: "2" },
    ];
    expect(sumsSince(rows, ["2026-11-27", "2026-11-21", "2026-11-20", "2026-08-30"])).toEqual([
      { network: "arc-testnet", sums: ["2", "2", "2", "2"] },
      { network: "base-sepolia", sums: ["1", "1", "9007199254740994", "9007199254740994"] },
      { network: "tempo-testnet", sums: ["0", "0", "0", "5"] },
    ]);
    expect(sumsSince([], ["2026-11-27"])).toEqual([]);
  });

  it("gives each day of traffic its revenue in one token, 0 on a day without any", () => {
    const traffic = [
      { day: "2026-11-26", requests: 3, successes: 2, errors: 1 },
      { day: "2026-11-27", requests: 1, successes: 1, errors: 0 },
    ];
    const rows = [
      { day: "2026-11-27", network: "base-sepolia", amount: "4" },
      { day: "2026-11-26", network: "tempo-testnet", amount: "9" },
    ];
    expect(daysInToken(traffic, rows, "USDC")).toEqual([
      { day: "2026-11-26", requests: 3, successes: 2, errors: 1, revenue: "0" },
      { day: "2026-11-27", requests: 1, successes: 1, errors: 0, revenue: "4" },
    ]);
  });
});
