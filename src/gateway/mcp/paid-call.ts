import type { Context } from "hono";
import { exampleOf, type JsonSchema } from "../../core/discovery/json-schema.ts";
import type { McpTool, ToolTarget } from "../../core/discovery/mcp.ts";
import { BODY_METHODS } from "../../core/discovery/operations.ts";
import type { GatewayEnv } from "../env.ts";
import type { Outcome, PaymentInput, Protocol } from "../pipeline/method.ts";
import { METHODS } from "../pipeline/methods.ts";
import { runPayment } from "../pipeline/run.ts";

/**
 * The MCP transport of the payment pipeline (docs/mcp.md): a paid tool call into the pipeline's input (plain values,
 * the same as the HTTP transport makes of the route's payment URL), the pipeline's outcome into a tool result or a
 * JSON-RPC error, in each standard's MCP form:
 *
 * - x402 (its MCP transport): the payment in `_meta["x402/payment"]`; no payment, or a refused one, is a tool error
 *   (`isError: true`) whose `structuredContent` (and text) is the `PaymentRequired`, with Bazaar's MCP input form;
 *   the settlement in the result's `_meta["x402/payment-response"]`.
 * - MPP (mppx's MCP transport): the credential in `_meta["org.paymentauth/credential"]`; no payment is JSON-RPC error
 *   `-32042` with the challenges (also in the x402 tool error's `_meta["org.paymentauth/payment-required"]` when the
 *   tool takes both), a refused one `-32043`; the receipt in `_meta["org.paymentauth/receipt"]`.
 *
 * Verify, claim, forward, settle and record are the pipeline's: nothing of them is here.
 */

type Ctx = Context<GatewayEnv>;
type Lib = typeof import("./lib.ts");
type PaidTarget = Extract<ToolTarget, { kind: "paid" }>;

export const X402_PAYMENT_META = "x402/payment";
export const X402_RESPONSE_META = "x402/payment-response";
export const MPP_CREDENTIAL_META = "org.paymentauth/credential";
export const MPP_PAYMENT_REQUIRED_META = "org.paymentauth/payment-required";
export const MPP_RECEIPT_META = "org.paymentauth/receipt";
/** mppx's JSON-RPC codes: payment required, payment verification failed. */
export const MPP_PAYMENT_REQUIRED = -32042;
export const MPP_VERIFICATION_FAILED = -32043;

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface PaidCall {
  c: Ctx;
  lib: Lib;
  tool: McpTool;
  target: PaidTarget;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
}

/** The request the payment pays for, as the HTTP route would get it: GET arguments as the query, else the JSON body. */
function inputOf(call: PaidCall, protocol: Protocol, credential: string | undefined): PaymentInput {
  const { c, target, args } = call;
  const operation = target.operations.find((op) => op.protocol === protocol);
  const url = new URL(operation?.url ?? "");
  const body = BODY_METHODS.includes(target.method);
  if (!body) {
    for (const [name, value] of Object.entries(args)) {
      url.searchParams.append(name, typeof value === "string" ? value : JSON.stringify(value));
    }
  }
  return {
    env: c.env,
    route: { serviceId: target.paywall.serviceId ?? "", slug: target.paywall.slug },
    request: {
      method: target.method,
      url: url.toString(),
      headers: new Headers(body ? { "Content-Type": "application/json" } : {}),
      body: body ? (new TextEncoder().encode(JSON.stringify(args)).buffer as ArrayBuffer) : undefined,
    },
    credential,
    clientIp: c.req.header("cf-connecting-ip"),
    defer: (work) => c.executionCtx.waitUntil(work),
    via: { transport: "mcp", tool: call.tool.name },
  };
}

const text = (value: string): ToolResult["content"] => [{ type: "text", text: value }];
const toolError = (message: string, extra: Partial<ToolResult> = {}): ToolResult => ({
  isError: true,
  content: text(message),
  ...extra,
});

/** A paid tool call: paid with the credential its `_meta` carries, else answered with the standards' challenges. */
export async function paidCall(call: PaidCall): Promise<ToolResult> {
  const { lib, meta } = call;
  const x402 = meta?.[X402_PAYMENT_META];
  const mpp = meta?.[MPP_CREDENTIAL_META];
  const offers = (protocol: Protocol) => call.target.operations.some((op) => op.protocol === protocol);
  if (x402 !== undefined) {
    if (!offers("x402")) throw invalid(lib, `${call.tool.name} takes no x402 payments`);
    let credential: string;
    try {
      credential = lib.encodePaymentSignatureHeader(x402 as Parameters<Lib["encodePaymentSignatureHeader"]>[0]);
    } catch {
      throw invalid(lib, "_meta.x402/payment is not an x402 payment payload");
    }
    return resultOf(call, "x402", await run(call, "x402", credential));
  }
  if (mpp !== undefined) {
    if (!offers("mpp")) throw invalid(lib, `${call.tool.name} takes no MPP payments`);
    let credential: string;
    try {
      credential = lib.Credential.serialize(mpp as Parameters<Lib["Credential"]["serialize"]>[0]);
    } catch {
      throw invalid(lib, "_meta.org.paymentauth/credential is not an MPP credential");
    }
    return resultOf(call, "mpp", await run(call, "mpp", credential));
  }
  const mppRequired = offers("mpp") ? await mppChallenges(call, await run(call, "mpp", undefined)) : undefined;
  if (!offers("x402")) {
    throw new lib.McpError(MPP_PAYMENT_REQUIRED, "Payment Required", { httpStatus: 402, challenges: mppRequired ?? [] });
  }
  const required = await x402Required(call, await run(call, "x402", undefined));
  return toolError(JSON.stringify(required), {
    structuredContent: required,
    ...(mppRequired ? { _meta: { [MPP_PAYMENT_REQUIRED_META]: { httpStatus: 402, challenges: mppRequired } } } : {}),
  });
}

async function run(call: PaidCall, protocol: Protocol, credential: string | undefined): Promise<Outcome> {
  const outcome = await runPayment(METHODS[protocol] as (typeof METHODS)[string], inputOf(call, protocol, credential));
  const errorCode = "errorCode" in outcome ? outcome.errorCode : undefined;
  if (errorCode) call.c.set("errorCode", errorCode);
  return outcome;
}

const invalid = (lib: Lib, message: string) => new lib.McpError(lib.ErrorCode.InvalidParams, message);

/** The standard's 402 as its MCP form, or the refusal that stands in its place (the paywall went away: -32602). */
function refusalOf(call: PaidCall, outcome: Outcome): Response {
  if (outcome.kind === "challenge") return outcome.response;
  if (outcome.kind === "refused" && outcome.refusal.by === "standard") return outcome.refusal.answer;
  if (outcome.kind === "answer" && outcome.response.status === 402) return outcome.response;
  if (outcome.kind === "error" && (outcome.error.status === 404 || outcome.error.status === 405)) {
    throw invalid(call.lib, `Unknown tool: ${call.tool.name}`);
  }
  const error =
    outcome.kind === "error"
      ? outcome.error
      : outcome.kind === "refused" && outcome.refusal.by === "conflict"
        ? outcome.refusal.error
        : undefined;
  throw new call.lib.McpError(-32000, error?.message ?? "The payment could not be asked for");
}

/** x402's `PaymentRequired` of a 402, with Bazaar's MCP input form in place of the HTTP one. */
async function x402Required(call: PaidCall, outcome: Outcome): Promise<Record<string, unknown>> {
  const header = refusalOf(call, outcome).headers.get("PAYMENT-REQUIRED") ?? "";
  const required = call.lib.decodePaymentRequiredHeader(header);
  const { tool } = call;
  const declared = call.lib.declareDiscoveryExtension({
    toolName: tool.name,
    description: tool.description,
    transport: "streamable-http",
    inputSchema: tool.inputSchema as unknown as Record<string, unknown>,
    example: exampleOf(tool.inputSchema as JsonSchema) as Record<string, unknown>,
  } as Parameters<Lib["declareDiscoveryExtension"]>[0]);
  return { ...required, extensions: { ...required.extensions, ...declared } } as Record<string, unknown>;
}

/** MPP's challenges of a 402, as mppx's MCP client reads them. */
async function mppChallenges(call: PaidCall, outcome: Outcome): Promise<unknown[]> {
  return call.lib.Challenge.fromResponseList(refusalOf(call, outcome));
}

/** The pipeline's outcome of a paid call, as the tool's result or the standard's MCP refusal. */
async function resultOf(call: PaidCall, protocol: Protocol, outcome: Outcome): Promise<ToolResult> {
  const { lib } = call;
  const refused =
    outcome.kind === "challenge" ||
    (outcome.kind === "refused" && outcome.refusal.by === "standard") ||
    (outcome.kind === "answer" && outcome.response.status === 402);
  if (refused) {
    if (protocol === "mpp") {
      const challenges = await mppChallenges(call, outcome);
      throw new lib.McpError(MPP_VERIFICATION_FAILED, "Payment verification failed", { httpStatus: 402, challenges });
    }
    const required = await x402Required(call, outcome);
    return toolError(JSON.stringify(required), { structuredContent: required });
  }
  if (outcome.kind === "error") {
    if (outcome.error.status === 404 || outcome.error.status === 405) throw invalid(lib, `Unknown tool: ${call.tool.name}`);
    return toolError(`${outcome.error.code}: ${outcome.error.message}`);
  }
  if (outcome.kind === "refused" && outcome.refusal.by === "conflict") {
    return toolError(`${outcome.refusal.error.code}: ${outcome.refusal.error.message}`);
  }
  const { response } = outcome as Extract<Outcome, { kind: "answer" }>;
  return answerOf(call, protocol, response);
}

/** The upstream's answer as the tool's result: its body as text (JSON as structured content), the settlement in `_meta`. */
async function answerOf(call: PaidCall, protocol: Protocol, response: Response): Promise<ToolResult> {
  const body = await response.text();
  const result: ToolResult = { content: text(body) };
  if (response.status >= 400) result.isError = true;
  else {
    const json = (response.headers.get("content-type") ?? "").includes("json") ? parsed(body) : undefined;
    if (json) result.structuredContent = json;
  }
  const meta: Record<string, unknown> = {};
  const settlement = response.headers.get("PAYMENT-RESPONSE");
  if (protocol === "x402" && settlement) meta[X402_RESPONSE_META] = call.lib.decodePaymentResponseHeader(settlement);
  const receipt = response.headers.get("Payment-Receipt");
  if (protocol === "mpp" && receipt) {
    const decoded = call.lib.Receipt.deserialize(receipt);
    meta[MPP_RECEIPT_META] = { ...decoded };
  }
  if (Object.keys(meta).length > 0) result._meta = meta;
  return result;
}

function parsed(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
