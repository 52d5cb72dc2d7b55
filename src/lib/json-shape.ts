export interface JsonLimits {
  /** Deepest nesting of objects and arrays (the value itself is depth 1). */
  maxDepth: number;
  /** Largest serialized size, in UTF-16 code units. */
  maxLength: number;
}

/**
 * Why a free-form JSON value (cacheRules, event metadata) cannot be stored, or `null` if it can. Checked without
 * recursion, so a 10,000-deep value is refused instead of overflowing the stack when it is serialized later.
 * Strings and keys must be well-formed Unicode; `__proto__` keys are refused (parsers would drop or misread them).
 */
export function jsonShapeProblem(value: unknown, limits: JsonLimits): string | null {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node === "string") {
      if (!node.isWellFormed()) return "Strings must be well-formed Unicode";
      continue;
    }
    if (node === null || typeof node !== "object") continue;
    if (depth > limits.maxDepth) return `Nested deeper than ${limits.maxDepth} levels`;
    for (const [key, child] of Object.entries(node)) {
      if (key === "__proto__") return "The key __proto__ is not allowed";
      if (!key.isWellFormed()) return "Keys must be well-formed Unicode";
      stack.push([child, depth + 1]);
    }
  }
  return JSON.stringify(value).length > limits.maxLength ? `Larger than ${limits.maxLength} characters of JSON` : null;
}

/**
 * True if a JSON text has a `__proto__` key anywhere. Object parsers drop or misread such keys (zod's records
 * skip them silently), so a body carrying one is refused before it is read. Unparsable text is left to the validator.
 */
export function hasPrototypeKey(text: string): boolean {
  if (!text.includes("__proto__") && !text.includes("\\u")) return false;
  let found = false;
  try {
    JSON.parse(text, (key, value) => {
      if (key === "__proto__") found = true;
      return value;
    });
  } catch {
    return false;
  }
  return found;
}
