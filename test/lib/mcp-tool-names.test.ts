// MCP tool names from paywall slugs and free routes (src/core/discovery/mcp.ts): MCP's characters, at most 128, and a
// paid tool never named like another paywall's or a free route's.
import { describe, expect, it } from "vitest";
import { freeToolName, paidToolName } from "../../src/core/discovery/mcp.ts";

const MCP_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

describe("MCP tool names", () => {
  it("a paid tool is its slug, with the method in capitals when the paywall allows several", () => {
    expect(paidToolName("forecast", "GET", false)).toBe("forecast");
    expect(paidToolName("forecast", "POST", true)).toBe("forecast_POST");
  });

  it("a free tool is FREE and its route, in MCP's characters and length", () => {
    expect(freeToolName("/v1/status")).toBe("FREE_v1_status");
    expect(freeToolName("/a b/ü")).toMatch(MCP_NAME);
    expect(freeToolName(`/${"x".repeat(300)}`)).toMatch(MCP_NAME);
  });

  it("suffixed and free names hold capitals, which slugs never do", () => {
    for (const name of [paidToolName("a", "PATCH", true), freeToolName("/a")]) expect(name).not.toBe(name.toLowerCase());
  });
});
