import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { publicError } from "../../src/gateway/mcp/endpoint.ts";
import { consoleOutput } from "../support/console.ts";

// The SDK sends a thrown error's message to the MCP client as it is: only refusals written for the client may pass.
describe("what a failed tool call tells the MCP client", () => {
  const lib = { McpError, ErrorCode };

  it("passes a refusal written for the client through unchanged", () => {
    const refusal = new McpError(ErrorCode.InvalidParams, "Unknown tool: nope");
    expect(publicError(lib, refusal, "req_1")).toBe(refusal);
  });

  it("replaces anything unexpected with a generic -32603 naming the request, never the error's text", () => {
    const log = consoleOutput();
    const err = publicError(lib, new Error("D1_ERROR: no such column: secret_sealed in SELECT * FROM services"), "req_2");
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InternalError);
    expect(err.message).toContain("req_2");
    expect(err.message).not.toMatch(/D1_ERROR|SELECT|secret/);
    expect(log.at("error")).toHaveLength(1); // the operator sees what failed, in the log only
    expect(log.at("error")[0]).toContain("no such column");
  });
});
