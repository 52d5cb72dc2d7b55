import type { PaywallRow } from "../../db/schema.ts";
import { supportsX402 } from "../money/networks.ts";
import { usdcDecimal } from "../money/usdc.ts";
import { embeddable, exampleOf, type JsonSchema } from "./json-schema.ts";
import { BODY_METHODS, type PaidOperation } from "./operations.ts";

/**
 * What the x402 Bazaar extension of a paywall's 402 says for one method (docs/discovery.md, "Bazaar"): the input
 * (query parameters for GET, a JSON body otherwise) with its schema and an example that satisfies it, and the output
 * with an example — always one: validators count a 402 without `output.example` as having no output schema. Plain
 * data: the gateway hands it to `@x402/extensions/bazaar`'s `declareDiscoveryExtension`.
 */
export interface BazaarDeclaration {
  bodyType?: "json";
  input: Record<string, unknown>;
  inputSchema: JsonSchema;
  output: { example: Record<string, unknown> | unknown[]; schema?: JsonSchema };
  /** Present only when the paywall accepts sessions: added to the extension's `info` next to input and output. */
  sessions?: SessionTerms;
}

/** What discovery says of a paywall's sessions (docs/sessions.md): the scheme and the least deposit that opens one. */
export interface SessionTerms {
  scheme: "batch-settlement";
  /** Atomic units (micro-USDC), as the 402 asks for amounts. */
  minDeposit: string;
  /** The same in decimal USD, as the documents price. */
  minDepositUsd: string;
}

/** The paywall's session terms when it accepts sessions (turned on, with an EVM network), else `undefined`. */
export function sessionTermsOf(
  paywall: Pick<PaywallRow, "sessionsEnabled" | "sessionsMinDeposit" | "price" | "networks">,
): SessionTerms | undefined {
  if (!paywall.sessionsEnabled || !supportsX402(paywall.networks)) return undefined;
  const minDeposit = paywall.sessionsMinDeposit ?? paywall.price;
  return { scheme: "batch-settlement", minDeposit, minDepositUsd: usdcDecimal(minDeposit) };
}

const asObject = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The output example a paywall's 402 and document show: its own, else one made from its output schema, else `{}`. */
export function outputExampleOf(
  paywall: Pick<PaywallRow, "outputExample" | "outputSchema">,
): Record<string, unknown> | unknown[] {
  if (paywall.outputExample) return paywall.outputExample;
  const made = paywall.outputSchema ? exampleOf(paywall.outputSchema as JsonSchema) : undefined;
  return made && typeof made === "object" ? (made as Record<string, unknown> | unknown[]) : {};
}

/** The input example of a paywall's input schema (`{}` without one). */
export const inputExampleOf = (paywall: Pick<PaywallRow, "inputSchema">) =>
  asObject(paywall.inputSchema ? exampleOf(paywall.inputSchema as JsonSchema) : {});

/** ` Sessions accepted: …` for an x402 operation of a paywall that accepts them, else "". */
export function sessionsText(op: PaidOperation): string {
  const sessions = op.protocol === "x402" ? sessionTermsOf(op.paywall) : undefined;
  return sessions
    ? ` Sessions accepted (x402 batch-settlement): deposit at least ${sessions.minDepositUsd} USD once, then pay each call with a voucher.`
    : "";
}

export function bazaarDeclaration(
  paywall: Pick<
    PaywallRow,
    "inputSchema" | "outputSchema" | "outputExample" | "sessionsEnabled" | "sessionsMinDeposit" | "price" | "networks"
  >,
  method: string,
): BazaarDeclaration {
  const sessions = sessionTermsOf(paywall);
  const inputSchema = paywall.inputSchema ? embeddable(paywall.inputSchema as JsonSchema) : undefined;
  const output = {
    example: outputExampleOf(paywall),
    ...(paywall.outputSchema ? { schema: embeddable(paywall.outputSchema as JsonSchema) } : {}),
  };
  const input = inputExampleOf(paywall);
  const declaration: BazaarDeclaration = BODY_METHODS.includes(method)
    ? { bodyType: "json", input, inputSchema: inputSchema ?? { type: "object" }, output }
    : { input, inputSchema: inputSchema ?? { properties: {} }, output };
  return sessions ? { ...declaration, sessions } : declaration;
}
