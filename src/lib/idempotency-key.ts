import { sha256Hex } from "./ids.ts";

/** An `Idempotency-Key`: 1 to 255 printable ASCII characters (space to `~`). */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

export const IDEMPOTENCY_KEY_RULE = "1 to 255 printable ASCII characters";

/** Printable ASCII only, at any length: the character part of the rule, for a schema that checks the length apart. */
export const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * JSON with every object's keys sorted (recursively), arrays in order: two bodies that parse to the same value
 * serialize to the same text, however their keys were ordered or spaced.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** SHA-256 (hex) of a parsed JSON body's canonical text; no body (`undefined`) hashes the empty text. */
export const bodyHash = (body: unknown): Promise<string> => sha256Hex(body === undefined ? "" : canonicalJson(body));
