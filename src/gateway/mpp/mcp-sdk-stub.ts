/**
 * Stand-in for `@modelcontextprotocol/sdk/types.js` in the Worker's bundle (wrangler.toml `alias`):
 * mppx's server imports it dynamically on its MCP transport path only, which the gateway (HTTP) never takes, and the
 * SDK is not installed.
 */
export class McpError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}
