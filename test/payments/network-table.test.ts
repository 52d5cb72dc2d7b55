import { describe, expect, it } from "vitest";
import { caip2, NETWORK_TABLE, networkOfCaip2, networkTable } from "../../src/core/money/network-table.ts";
import { NETWORK_IDS } from "../../src/core/money/networks.ts";

describe("network table", () => {
  it("has one entry per network id, EVM networks with an EIP-712 domain, Tempo networks without", () => {
    expect(Object.keys(NETWORK_TABLE).sort()).toEqual([...NETWORK_IDS].sort());
    for (const [id, entry] of Object.entries(NETWORK_TABLE)) {
      expect(entry.asset).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(entry.eip712 === null).toBe(id.startsWith("tempo"));
      expect(entry.kind).toBe(id.startsWith("tempo") ? "tempo" : "evm");
    }
    expect(caip2(NETWORK_TABLE["base-sepolia"])).toBe("eip155:84532");
  });

  it("applies NETWORK_OVERRIDES from the environment once, leaving other networks as they are", () => {
    const env = {
      NETWORK_OVERRIDES: JSON.stringify({ "base-sepolia": { chainId: 31337, asset: `0x${"ab".repeat(20)}` } }),
    };
    const table = networkTable(env);
    expect(table["base-sepolia"]).toEqual({
      kind: "evm",
      chainId: 31337,
      asset: `0x${"ab".repeat(20)}`,
      token: "USDC",
      eip712: { name: "USDC", version: "2" },
      rpcUrl: "https://sepolia.base.org",
      explorerUrl: null, // a chain of its own: the public explorer does not know it
    });
    expect(table.base).toEqual(NETWORK_TABLE.base);
    expect(networkTable(env)).toBe(table);
    expect(networkOfCaip2(table, ["base", "base-sepolia"], "eip155:31337")).toBe("base-sepolia");
    expect(networkOfCaip2(table, ["base"], "eip155:31337")).toBeUndefined();
    expect(NETWORK_TABLE["base-sepolia"].chainId).toBe(84532);
  });

  it("refuses an override naming an unknown network, a malformed address or a non-HTTP RPC URL", () => {
    expect(() => networkTable({ NETWORK_OVERRIDES: '{"mars":{"chainId":1}}' })).toThrow();
    expect(() => networkTable({ NETWORK_OVERRIDES: '{"base":{"asset":"0x12"}}' })).toThrow();
    expect(() => networkTable({ NETWORK_OVERRIDES: '{"tempo":{"rpcUrl":"ftp://rpc.example.com"}}' })).toThrow();
  });

  it("every network names its chain's public RPC by default (viem/chains), which an override replaces", () => {
    expect(NETWORK_TABLE["base-sepolia"].rpcUrl).toBe("https://sepolia.base.org");
    expect(NETWORK_TABLE.base.rpcUrl).toBe("https://mainnet.base.org");
    expect(NETWORK_TABLE["tempo-testnet"].rpcUrl).toBe("https://rpc.moderato.tempo.xyz");
    expect(NETWORK_TABLE.tempo.rpcUrl).toBe("https://rpc.tempo.xyz");
    const table = networkTable({ NETWORK_OVERRIDES: '{"tempo-testnet":{"rpcUrl":"http://127.0.0.1:9463"}}' });
    expect(table["tempo-testnet"]).toMatchObject({ chainId: 42431, rpcUrl: "http://127.0.0.1:9463" });
  });
});

describe("explorer links of a local chain", () => {
  it("a network overridden to a local chain has no explorer; the others keep theirs", () => {
    const table = networkTable({ NETWORK_OVERRIDES: JSON.stringify({ "base-sepolia": { rpcUrl: "http://127.0.0.1:9461" } }) });
    expect(table["base-sepolia"].explorerUrl).toBeNull();
    expect(table["base-sepolia"].rpcUrl).toBe("http://127.0.0.1:9461");
    expect(table.base.explorerUrl).toBe(NETWORK_TABLE.base.explorerUrl);
    expect(networkTable({})["base-sepolia"].explorerUrl).toBe("https://sepolia.basescan.org");
  });
});
