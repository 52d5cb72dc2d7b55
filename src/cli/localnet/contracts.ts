/**
 * The local chain's contracts, compiled offline with solc-js (npm `solc`) from ./contracts/*.sol. The artifacts are
 * cached in node_modules/.cache/localnet (outside the sources: never committed, never linted), keyed by the sources
 * and the compiler version, so only the first start compiles (a few seconds).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import solc from "solc";
import type { Abi, Hex } from "viem";

export interface Artifact {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

export interface Artifacts {
  TestUSDC: Artifact;
  Multicall3: Artifact;
  /** x402 batch-settlement's channel contract and ERC-3009 deposit collector: our stand-ins (BatchSettlement.sol). */
  BatchSettlement: Artifact;
  ERC3009DepositCollector: Artifact;
}

const CONTRACTS_DIR = join(import.meta.dirname, "contracts");
const CACHE_DIR = join(import.meta.dirname, "../../../node_modules/.cache/localnet");

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

function compile(sources: Record<string, string>): Artifacts {
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(Object.entries(sources).map(([file, content]) => [file, { content }])),
    settings: {
      evmVersion: "cancun",
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join("\n")}`);
  const pick = (file: string, name: string): Artifact => {
    const c = output.contracts[file]?.[name];
    if (!c) throw new Error(`solc produced no ${name} in ${file}`);
    return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, deployedBytecode: `0x${c.evm.deployedBytecode.object}` };
  };
  return {
    TestUSDC: pick("TestUSDC.sol", "TestUSDC"),
    Multicall3: pick("Multicall3.sol", "Multicall3"),
    BatchSettlement: pick("BatchSettlement.sol", "BatchSettlement"),
    ERC3009DepositCollector: pick("BatchSettlement.sol", "ERC3009DepositCollector"),
  };
}

/** Compiles the contracts, or reads the cached artifacts of the same sources and compiler. */
export function loadArtifacts(): Artifacts {
  const files = readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith(".sol"))
    .sort();
  const sources = Object.fromEntries(files.map((f) => [f, readFileSync(join(CONTRACTS_DIR, f), "utf8")]));
  const key = createHash("sha256").update(solc.version()).update(JSON.stringify(sources)).digest("hex").slice(0, 16);
  const cached = join(CACHE_DIR, `artifacts-${key}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8")) as Artifacts;
  const artifacts = compile(sources);
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(cached, JSON.stringify(artifacts));
  return artifacts;
}
