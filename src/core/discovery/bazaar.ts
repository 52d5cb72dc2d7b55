import type { PaywallRow } from "../../db/schema.ts";
import { embeddable, exampleOf, type JsonSchema } from "./json-schema.ts";
import { BODY_METHODS } from "./operations.ts";

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

export function bazaarDeclaration(
  paywall: Pick<PaywallRow, "inputSchema" | "outputSchema" | "outputExample">,
  method: string,
): BazaarDeclaration {
  const inputSchema = paywall.inputSchema ? embeddable(paywall.inputSchema as JsonSchema) : undefined;
  const output = {
    example: outputExampleOf(paywall),
    ...(paywall.outputSchema ? { schema: embeddable(paywall.outputSchema as JsonSchema) } : {}),
  };
  const input = inputExampleOf(paywall);
  return BODY_METHODS.includes(method)
    ? { bodyType: "json", input, inputSchema: inputSchema ?? { type: "object" }, output }
    : { input, inputSchema: inputSchema ?? { properties: {} }, output };
}
