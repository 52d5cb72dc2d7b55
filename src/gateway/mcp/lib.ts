// The parts of the MCP SDK the gateway uses, loaded lazily by endpoint.ts (as ../x402/lib.ts is by ../x402/sdk.ts):
// an isolate that only answers the management API or the HTTP payment routes never evaluates the SDK
// (test/bench/startup.ts checks it). JSON Schema through `@cfworker/json-schema` (the SDK's Workers-safe provider):
// the SDK's default, ajv, generates code, which Workers refuse.
export { Server } from "@modelcontextprotocol/sdk/server/index.js";
export { readRequestBody, requestBodyTooLargeMessage } from "@modelcontextprotocol/sdk/server/requestBody.js";
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
export {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
export { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
// The payment standards' MCP wire forms: x402's payload and settlement as its HTTP headers encode them (the pipeline
// reads and writes those), MPP's credential, challenge and receipt as mppx reads and writes them.
export {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
export { declareDiscoveryExtension } from "@x402/extensions/bazaar";
export { Challenge, Credential, Receipt } from "mppx";
