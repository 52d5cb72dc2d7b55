// The gateway's targets as the bench asserts them, over made-up measurements: what passes, what fails, and that a
// scenario's expected 402s are not errors.
import { describe, expect, it } from "vitest";
import type { Overhead } from "./overhead.ts";
import type { RecordsReport } from "./records.ts";
import {
  MCP_PAID,
  MCP_TOOLS_LIST,
  type Measured,
  MPP_CHALLENGE,
  STARTUP_BUDGET_MS,
  STARTUP_LIMIT_MS,
  TARGETS,
  type TargetInput,
  X402_CHALLENGE,
  X402_ONE_TENANT,
  X402_PAID,
  X402_PEER,
  X402_SESSION,
  X402_TENANTS,
} from "./targets.ts";

const measured = (name: string, fields: Partial<Measured>): Measured => ({
  name,
  target: "app",
  read: false,
  rps: 100,
  p50: 10,
  p99: 20,
  errors: 0,
  non2xx: 0,
  unexpected: 0,
  alongsideBad: 0,
  ...fields,
});

const overheadOf = (addedP99: number): Overhead => ({
  requests: 50,
  latency: { p50: addedP99 / 2 + 1, p99: addedP99 + 1 },
  standIns: { p50: 1, p99: 1 },
  added: { p50: addedP99 / 2, p99: addedP99 },
  phases: [],
});

const verdict = (name: string, scenarios: Measured[]) => {
  const target = TARGETS.find((t) => t.name.startsWith(name));
  if (!target) throw new Error(`no target ${name}`);
  return target.check({ scenarios, bundleGzipKiB: 200, bundleCeilingKiB: 1024 } satisfies TargetInput);
};

describe("gateway targets", () => {
  it("each protocol's 402 challenge passes at 80% of the paywall-read floor's req/s and fails below", () => {
    for (const name of [X402_CHALLENGE, MPP_CHALLENGE]) {
      const at = (ratio: number) => verdict(name, [measured(name, { ratioToFloor: ratio })]).status;
      expect(at(0.8)).toBe("PASS");
      expect(at(0.79)).toBe("FAIL");
      expect(verdict(name, []).status).toBe("SKIP");
    }
  });

  it("the paid request compares its p99 without the stand-ins' time with 3× the paid-request floor's p99", () => {
    const at = (addedP99: number) =>
      verdict(X402_PAID, [measured(X402_PAID, { floorP99: 100, p99: 1_000, overhead: overheadOf(addedP99) })]);
    expect(at(300).status).toBe("PASS");
    expect(at(301).status).toBe("FAIL");
    expect(at(301).detail).toContain("3.01× the floor's p99 100.00 ms");
    // Without requests joined with the stand-ins' log there is nothing to compare: SKIP, never a PASS.
    expect(verdict(X402_PAID, [measured(X402_PAID, { floorP99: 100 })]).status).toBe("SKIP");
  });

  it("the paid request: 0 D1 statements, 60% of the floor's req/s, p99 ≤ 2× the floor's: today's 11 statements FAIL", () => {
    const paid = (fields: Partial<Measured>) => [measured(X402_PAID, fields)];
    const zero = `${X402_PAID}: 0 D1 statements`;
    expect(verdict(zero, paid({ statementsPerReq: 0 })).status).toBe("PASS");
    expect(verdict(zero, paid({ statementsPerReq: 11 })).detail).toBe("11.00 statements/req");
    expect(verdict(zero, paid({ statementsPerReq: 11 })).status).toBe("FAIL");
    expect(verdict(`${X402_PAID} ≥ 60%`, paid({ ratioToFloor: 0.6 })).status).toBe("PASS");
    expect(verdict(`${X402_PAID} ≥ 60%`, paid({ ratioToFloor: 0.27 })).status).toBe("FAIL");
    const p99 = `${X402_PAID}: p99 ≤ 2×`;
    expect(verdict(p99, paid({ p99ToFloor: 2, floorP99: 50 })).status).toBe("PASS");
    expect(verdict(p99, paid({ p99ToFloor: 2.01, floorP99: 50 })).status).toBe("FAIL");
  });

  it("the peer row: our paid request's req/s ÷ the SDK resource server's, held to 0.8", () => {
    const name = `${X402_PAID} ≥ 0.8×`;
    const run = (ours: number, peer: number) =>
      verdict(name, [measured(X402_PAID, { rps: ours }), measured(X402_PEER, { target: "peer", rps: peer })]);
    expect(run(80, 100).status).toBe("PASS");
    expect(run(79, 100).status).toBe("FAIL");
    expect(run(79, 100).detail).toContain("79 vs 100 req/s = 0.79×");
    expect(verdict(name, [measured(X402_PAID, {})]).status).toBe("SKIP");
  });

  it("1,000 tenants: no more statements or DO calls per request than one tenant, p50 ≤ 1.5×", () => {
    const one = measured(X402_ONE_TENANT, { p50: 100, statementsPerReq: 11, doCallsPerReq: 1 });
    const many = (fields: Partial<Measured>) =>
      verdict(X402_TENANTS, [one, measured(X402_TENANTS, { p50: 150, statementsPerReq: 11, doCallsPerReq: 1, ...fields })]);
    expect(many({}).status).toBe("PASS");
    expect(many({ statementsPerReq: 12 }).status).toBe("FAIL");
    expect(many({ doCallsPerReq: 2 }).status).toBe("FAIL");
    expect(many({ p50: 151 }).status).toBe("FAIL");
  });

  it("the records of paid requests: ≤ 50 D1 statements per 1,000, every one visible within 5 s at p99", () => {
    const records = (fields: Partial<RecordsReport>): RecordsReport => ({
      requests: 1000,
      paid: 1000,
      statements: 50,
      statementsPer1000: 50,
      visible: 1000,
      delay: { p50: 1000, p99: 5000, max: 6000 },
      ...fields,
    });
    const check = (name: string, r: RecordsReport | undefined) =>
      TARGETS.find((t) => t.name.startsWith(name))!.check({
        scenarios: [],
        bundleGzipKiB: 1,
        bundleCeilingKiB: 1024,
        records: r,
      });
    const statements = "records of paid requests reaching D1: ≤ 50";
    const visible = "records of paid requests reaching D1: visible";
    expect(check(statements, records({})).status).toBe("PASS");
    // Today: each request writes its own 11 statements.
    expect(check(statements, records({ statements: 11_000, statementsPer1000: 11_000 })).status).toBe("FAIL");
    expect(check(statements, undefined).status).toBe("SKIP");
    expect(check(visible, records({})).status).toBe("PASS");
    expect(check(visible, records({ delay: { p50: 1, p99: 5001, max: 5001 } })).status).toBe("FAIL");
    // A record never seen is a failure, whatever the delays of the others.
    expect(check(visible, records({ visible: 999 })).status).toBe("FAIL");
  });

  it("MCP tools/list of 100 paywalls: ≥ 60% of the storage floor's req/s, p99 ≤ 3× the floor's", () => {
    const list = (fields: Partial<Measured>) => [measured(MCP_TOOLS_LIST, fields)];
    const rps = `${MCP_TOOLS_LIST} ≥ 60%`;
    expect(verdict(rps, list({ ratioToFloor: 0.6 })).status).toBe("PASS");
    expect(verdict(rps, list({ ratioToFloor: 0.59 })).status).toBe("FAIL");
    expect(verdict(rps, []).status).toBe("SKIP");
    const p99 = `${MCP_TOOLS_LIST}: p99 ≤ 3×`;
    expect(verdict(p99, list({ p99ToFloor: 3, floorP99: 40 })).status).toBe("PASS");
    expect(verdict(p99, list({ p99ToFloor: 3.01, floorP99: 40 })).status).toBe("FAIL");
    expect(verdict(p99, list({})).status).toBe("SKIP");
  });

  it("a paid MCP tools/call: p99 ≤ 1.3× the HTTP paid request's, preferably its interleaved slices", () => {
    const name = `${MCP_PAID}: p99 ≤ 1.3×`;
    const companion = (p99: number) => ({ name: X402_PAID, rps: 100, p50: 50, p99 });
    const mcp = (p99: number, fields: Partial<Measured> = {}) => measured(MCP_PAID, { p99, ...fields });
    expect(verdict(name, [mcp(130, { companion: companion(100) })]).status).toBe("PASS");
    expect(verdict(name, [mcp(131, { companion: companion(100) })]).status).toBe("FAIL");
    expect(verdict(name, [mcp(131, { companion: companion(100) })]).detail).toContain("1.31× (interleaved slices)");
    // The interleaved slices win over the row measured on its own (another machine state).
    expect(verdict(name, [measured(X402_PAID, { p99: 200 }), mcp(131, { companion: companion(100) })]).status).toBe("FAIL");
    // Without the companion slices (--only without the HTTP row first): the HTTP row of the same run.
    expect(verdict(name, [measured(X402_PAID, { p99: 100 }), mcp(130)]).status).toBe("PASS");
    expect(verdict(name, [measured(X402_PAID, { p99: 100 }), mcp(131)]).status).toBe("FAIL");
    expect(verdict(name, [mcp(10)]).status).toBe("SKIP");
  });

  it("a session voucher: ≥ 0.8× the x402 challenge's req/s and p99 ≤ 2× its p99, in the interleaved slices", () => {
    const challenge = (rps: number, p99: number) => ({ name: X402_CHALLENGE, rps, p50: 5, p99 });
    const session = (rps: number, p99: number, c = challenge(1000, 50)) => [measured(X402_SESSION, { rps, p99, companion: c })];
    expect(verdict(`${X402_SESSION} ≥ 0.8×`, session(800, 100)).status).toBe("PASS");
    expect(verdict(`${X402_SESSION} ≥ 0.8×`, session(799, 100)).status).toBe("FAIL");
    expect(verdict(`${X402_SESSION}: p99 ≤ 2×`, session(800, 100)).status).toBe("PASS");
    expect(verdict(`${X402_SESSION}: p99 ≤ 2×`, session(800, 101)).status).toBe("FAIL");
    // Without the companion slices: the challenge's own row of the same run.
    const alone = [measured(X402_CHALLENGE, { rps: 1000, p99: 50 }), measured(X402_SESSION, { rps: 700, p99: 90 })];
    expect(verdict(`${X402_SESSION} ≥ 0.8×`, alone).status).toBe("FAIL");
    expect(verdict(`${X402_SESSION}: p99 ≤ 2×`, alone).status).toBe("PASS");
    expect(verdict(`${X402_SESSION} ≥ 0.8×`, [measured(X402_SESSION, {})]).status).toBe("SKIP");
  });

  it("a session voucher: 0 D1 statements, exactly 1 DO call, no facilitator or chain call during the load", () => {
    const name = `${X402_SESSION}: 0 D1 statements`;
    const s = (fields: Partial<Measured>) => [
      measured(X402_SESSION, { statementsPerReq: 0, doCallsPerReq: 1, standInCalls: 0, ...fields }),
    ];
    expect(verdict(name, s({})).status).toBe("PASS");
    expect(verdict(name, s({ statementsPerReq: 0.05 })).status).toBe("FAIL");
    expect(verdict(name, s({ doCallsPerReq: 2 })).status).toBe("FAIL");
    expect(verdict(name, s({ doCallsPerReq: 0 })).status).toBe("FAIL");
    expect(verdict(name, s({ standInCalls: 1 })).status).toBe("FAIL");
    expect(verdict(name, s({ standInCalls: undefined })).status).toBe("SKIP");
  });

  it("counts unexpected statuses, not a scenario's expected 402s, as errors", () => {
    const clean = measured(X402_CHALLENGE, { non2xx: 700 });
    expect(verdict("zero errors", [clean]).status).toBe("PASS");
    expect(verdict("zero errors", [{ ...clean, unexpected: 1 }]).status).toBe("FAIL");
    expect(verdict("zero errors", [{ ...clean, alongsideBad: 1 }]).status).toBe("FAIL");
  });
});

describe("startup and size targets", () => {
  const check = (name: string, input: Partial<TargetInput>) => {
    const target = TARGETS.find((t) => t.name.startsWith(name));
    if (!target) throw new Error(`no target ${name}`);
    return target.check({ scenarios: [], bundleGzipKiB: 700, bundleCeilingKiB: 1024, ...input });
  };
  const api = (paymentSdks: string[]) => ({ requests: ["GET /v1/health"], paymentSdks });

  it("holds the startup CPU to its budget, well under Cloudflare's 1 s limit", () => {
    expect(STARTUP_BUDGET_MS).toBeLessThanOrEqual(STARTUP_LIMIT_MS / 2);
    const at = (startupMs: number) => check("startup CPU", { startup: { startupMs } }).status;
    expect(at(STARTUP_BUDGET_MS)).toBe("PASS");
    expect(at(STARTUP_BUDGET_MS + 1)).toBe("FAIL");
    expect(check("startup CPU", {}).status).toBe("SKIP");
  });

  it("fails when an API request, or the startup, evaluates a payment SDK module", () => {
    const at = (atStartup: string[], evaluated: string[]) =>
      check("API requests evaluate no payment SDK", { startup: { startupMs: 1, atStartup, api: api(evaluated) } }).status;
    expect(at([], [])).toBe("PASS");
    expect(at(["@x402/core"], [])).toBe("FAIL");
    expect(at([], ["mppx"])).toBe("FAIL");
    expect(check("API requests evaluate no payment SDK", { startup: { startupMs: 1 } }).status).toBe("SKIP");
  });

  it("holds the bundle to the 1 MiB gzip ceiling", () => {
    expect(check("bundle ≤ 1 MiB gzip", { bundleGzipKiB: 1024 }).status).toBe("PASS");
    expect(check("bundle ≤ 1 MiB gzip", { bundleGzipKiB: 1024.01 }).status).toBe("FAIL");
  });
});
