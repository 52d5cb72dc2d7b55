import { describe, expect, it } from "vitest";
import {
  commonMode,
  modeOfNetwork,
  NETWORK_IDS,
  NETWORKS_BY_MODE,
  networksOutsideMode,
  supportsMpp,
} from "../../src/core/money/networks.ts";

// The contract's table (docs/api.md, "Modes and networks"), copied here as the oracle.
const TESTNET = ["arc-testnet", "base-sepolia", "hyperevm-testnet", "tempo-testnet"];
const MAINNET = ["base", "hyperevm", "tempo"];

describe("network ids", () => {
  it("match the contract's table, seven in all", () => {
    expect([...NETWORKS_BY_MODE.testnet].sort()).toEqual([...TESTNET].sort());
    expect([...NETWORKS_BY_MODE.mainnet].sort()).toEqual([...MAINNET].sort());
    expect([...NETWORK_IDS].sort()).toEqual([...TESTNET, ...MAINNET].sort());
    expect(new Set(NETWORK_IDS).size).toBe(7);
  });

  it.each(TESTNET)("%s is testnet", (n) => expect(modeOfNetwork(n)).toBe("testnet"));
  it.each(MAINNET)("%s is mainnet", (n) => expect(modeOfNetwork(n)).toBe("mainnet"));
  it.each(["", "Base", "BASE", "base ", "ethereum", "sepolia", "tempo-mainnet", "toString", "__proto__"])(
    "%j has no mode",
    (n) => {
      expect(modeOfNetwork(n)).toBeUndefined();
    },
  );
});

describe("networksOutsideMode", () => {
  it("lists the networks that do not belong to the mode, in order", () => {
    expect(networksOutsideMode(["base-sepolia", "base", "tempo-testnet", "tempo", "nope"], "testnet")).toEqual([
      "base",
      "tempo",
      "nope",
    ]);
    expect(networksOutsideMode(["base-sepolia", "base", "tempo-testnet", "tempo"], "mainnet")).toEqual([
      "base-sepolia",
      "tempo-testnet",
    ]);
    expect(networksOutsideMode(TESTNET, "testnet")).toEqual([]);
    expect(networksOutsideMode(MAINNET, "mainnet")).toEqual([]);
    expect(networksOutsideMode([], "mainnet")).toEqual([]);
  });
});

describe("commonMode", () => {
  it("is the one mode of the list", () => {
    expect(commonMode(TESTNET)).toBe("testnet");
    expect(commonMode(MAINNET)).toBe("mainnet");
    expect(commonMode(["tempo"])).toBe("mainnet");
  });
  it("is undefined for mixed, empty or unknown lists", () => {
    expect(commonMode(["base-sepolia", "base"])).toBeUndefined();
    expect(commonMode([])).toBeUndefined();
    expect(commonMode(["nope"])).toBeUndefined();
    expect(commonMode(["base", "nope"])).toBeUndefined();
  });
});

describe("supportsMpp", () => {
  it("needs tempo or tempo-testnet", () => {
    expect(supportsMpp(["tempo"])).toBe(true);
    expect(supportsMpp(["base-sepolia", "tempo-testnet"])).toBe(true);
    expect(supportsMpp(["base", "hyperevm"])).toBe(false);
    expect(supportsMpp(["base-sepolia", "arc-testnet", "hyperevm-testnet"])).toBe(false);
    expect(supportsMpp([])).toBe(false);
    expect(supportsMpp(["Tempo", "tempo "])).toBe(false);
  });
});
