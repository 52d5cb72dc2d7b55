import { z } from "zod";
import { type Issue, issuesOf } from "../../lib/issues.ts";
import { type JsonLimits, jsonShapeProblem } from "../../lib/json-shape.ts";

/**
 * The JSON Schema a paywall may carry to describe its input and output (docs/discovery.md, "Input and output
 * schemas"): a documented subset of JSON Schema 2020-12, checked for structure here with zod — never compiled. Code
 * generation is not allowed in Workers, so no JSON Schema validator (ajv) runs in the Worker; the Node tests check
 * the subset with ajv instead.
 *
 * The subset: `type` (a name or a list of names), `title`, `description`, `format`, `properties`, `required`,
 * `additionalProperties`, `items`, `enum`, `const`, `default`, `examples`, the numeric bounds (`minimum`, `maximum`,
 * `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`), the length bounds (`minLength`, `maxLength`, `minItems`,
 * `maxItems`, `minProperties`, `maxProperties`), `uniqueItems`, `pattern`, `anyOf`, `oneOf`, `allOf`, `deprecated`,
 * and `$schema` (2020-12 only) at the root. No `$ref`, `$defs` or `$id`: a schema stands alone (facilitators refuse
 * external references, and agents read one operation at a time).
 */

/** Bounds of a stored schema and of an output example: nesting (JSON levels) and serialized size. */
export const SCHEMA_LIMITS: JsonLimits = { maxDepth: 16, maxLength: 4096 };
export const EXAMPLE_LIMITS: JsonLimits = { maxDepth: 8, maxLength: 4096 };

export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

const TYPE_NAMES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
type TypeName = (typeof TYPE_NAMES)[number];

/** A schema of the subset, as stored (a plain JSON object). */
export interface JsonSchema {
  $schema?: string;
  type?: TypeName | TypeName[];
  title?: string;
  description?: string;
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: (string | number | boolean | null)[];
  const?: string | number | boolean | null;
  default?: unknown;
  examples?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  uniqueItems?: boolean;
  pattern?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  deprecated?: boolean;
}

const Scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);
const Count = z.int().min(0).max(1_000_000);
const compiles = (pattern: string) => {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
};

const Node: z.ZodType<JsonSchema> = z.lazy(() =>
  z.strictObject({
    type: z.union([z.enum(TYPE_NAMES), z.array(z.enum(TYPE_NAMES)).min(1).max(TYPE_NAMES.length)]).optional(),
    title: z.string().max(200).optional(),
    description: z.string().max(1000).optional(),
    format: z.string().min(1).max(50).optional(),
    properties: z
      .record(z.string().min(1).max(100), Node)
      .refine((p) => Object.keys(p).length <= 100, { message: "At most 100 properties" })
      .optional(),
    required: z.array(z.string().min(1).max(100)).max(100).optional(),
    additionalProperties: z.union([z.boolean(), Node]).optional(),
    items: Node.optional(),
    enum: z.array(Scalar).min(1).max(100).optional(),
    const: Scalar.optional(),
    default: z.json().optional(),
    examples: z.array(z.json()).max(10).optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    exclusiveMinimum: z.number().optional(),
    exclusiveMaximum: z.number().optional(),
    multipleOf: z.number().positive().optional(),
    minLength: Count.optional(),
    maxLength: Count.optional(),
    minItems: Count.optional(),
    maxItems: Count.optional(),
    minProperties: Count.optional(),
    maxProperties: Count.optional(),
    uniqueItems: z.boolean().optional(),
    pattern: z.string().max(500).refine(compiles, { message: "Must be a valid regular expression" }).optional(),
    anyOf: z.array(Node).min(1).max(10).optional(),
    oneOf: z.array(Node).min(1).max(10).optional(),
    allOf: z.array(Node).min(1).max(10).optional(),
    deprecated: z.boolean().optional(),
  }),
) as z.ZodType<JsonSchema>;

const typesOf = (schema: JsonSchema): TypeName[] =>
  schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];

/**
 * What is wrong with a schema a paywall would store (each issue's path inside the schema), or `[]`. `roots`: the
 * types the root must declare (`["object"]` for an input, `["object", "array"]` for an output).
 */
export function jsonSchemaIssues(value: unknown, roots: readonly TypeName[]): Issue[] {
  const shape = jsonShapeProblem(value, SCHEMA_LIMITS);
  if (shape) return [{ path: "", message: shape }];
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [{ path: "", message: "Must be a JSON Schema object" }];
  const { $schema, ...rest } = value as Record<string, unknown>;
  if ($schema !== undefined && $schema !== JSON_SCHEMA_DIALECT)
    return [{ path: "$schema", message: `Only ${JSON_SCHEMA_DIALECT} (JSON Schema 2020-12)` }];
  const parsed = Node.safeParse(rest);
  if (!parsed.success) return issuesOf(parsed.error);
  const types = typesOf(parsed.data);
  if (types.length !== 1 || !roots.includes(types[0] as TypeName)) {
    return [{ path: "type", message: `The root must be of type ${roots.map((t) => `"${t}"`).join(" or ")}` }];
  }
  return [];
}

/** The schema without its root `$schema`, to embed in another document (OpenAPI, the Bazaar extension). */
export function embeddable(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/**
 * The query of a GET paywall without an input schema, as the gateway forwards it: any parameters, each a string. An
 * OpenAPI `form`/`explode` query parameter of this schema stands for the whole query string, so agents and validators
 * are told the route takes a query rather than nothing.
 */
export const FORWARDED_QUERY_SCHEMA: JsonSchema = {
  type: "object",
  description: "Query parameters, forwarded to the service as sent",
  additionalProperties: { type: "string" },
};

const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "00:00:00Z",
  email: "agent@example.com",
  uri: "https://example.com/",
  url: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  hostname: "example.com",
};

function numberExample(schema: JsonSchema, integer: boolean): number {
  let value = 1;
  if (schema.minimum !== undefined) value = schema.minimum;
  if (schema.exclusiveMinimum !== undefined) value = schema.exclusiveMinimum + 1;
  if (schema.maximum !== undefined && value > schema.maximum) value = schema.maximum;
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) value = schema.exclusiveMaximum - 1;
  if (schema.multipleOf !== undefined) value = Math.ceil(value / schema.multipleOf) * schema.multipleOf;
  return integer ? Math.ceil(value) : value;
}

function stringExample(schema: JsonSchema): string {
  const byFormat = schema.format ? FORMAT_EXAMPLES[schema.format] : undefined;
  if (byFormat) return byFormat;
  const min = schema.minLength ?? 1;
  const base = "example".padEnd(min, "x");
  return schema.maxLength !== undefined ? base.slice(0, Math.max(schema.maxLength, 0)) : base;
}

/**
 * An example value of a schema, for the Bazaar extension's `input` (which must satisfy the schema, or facilitators
 * refuse the listing): the schema's own `examples[0]`, `default`, `const` or first `enum` value; else, for an
 * object, its required properties (and those that give an example), each by the same rule; else a value of its type
 * within its bounds (a `pattern` is not followed: give such a property `examples`).
 */
export function exampleOf(schema: JsonSchema, depth = 0): unknown {
  if (schema.examples && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const alternative = schema.anyOf?.[0] ?? schema.oneOf?.[0] ?? schema.allOf?.[0];
  const types = typesOf(schema);
  const type = types.find((t) => t !== "null") ?? types[0] ?? (schema.properties ? "object" : alternative ? undefined : "object");
  if (type === undefined && alternative) return exampleOf(alternative, depth + 1);
  if (depth > 16) return null;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const hasOwn = property.examples?.length || property.default !== undefined || property.const !== undefined;
        if (required.has(name) || hasOwn) out[name] = exampleOf(property, depth + 1);
      }
      return out;
    }
    case "array": {
      const item = schema.items ? exampleOf(schema.items, depth + 1) : "example";
      return Array.from({ length: Math.min(schema.minItems ?? 0, 10) }, () => item);
    }
    case "string":
      return stringExample(schema);
    case "number":
      return numberExample(schema, false);
    case "integer":
      return numberExample(schema, true);
    case "boolean":
      return true;
    default:
      return null;
  }
}

/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples", "required"]);

/** The schema without `pattern` (a tenant's expression is never run against anything in the Worker: no ReDoS). */
export function withoutPatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutPatterns);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(schema)) {
    if (key === "pattern") continue;
    if (DATA_KEYWORDS.has(key)) out[key] = child;
    else if (key === "properties" && child && typeof child === "object") {
      out[key] = Object.fromEntries(Object.entries(child).map(([name, property]) => [name, withoutPatterns(property)]));
    } else out[key] = withoutPatterns(child);
  }
  return out;
}

/**
 * Why `value` does not satisfy `schema` (`path: message`), or `null`: zod's own JSON Schema reader builds the check,
 * no code is generated. `pattern` is left out (see `withoutPatterns`), so this is a close reading, not a full one:
 * the Node tests hold the platform's own examples to ajv.
 */
export function exampleProblem(value: unknown, schema: JsonSchema): string | null {
  let check: z.ZodType;
  try {
    check = z.fromJSONSchema(withoutPatterns(embeddable(schema)) as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return null;
  }
  const result = check.safeParse(value);
  if (result.success) return null;
  const [first] = issuesOf(result.error);
  return first ? (first.path ? `${first.path}: ${first.message}` : first.message) : "Does not match the schema";
}

/** A paywall's `outputExample` must satisfy its `outputSchema` when both are set. */
export function outputExampleIssues(example: unknown, schema: unknown): Issue[] {
  if (example === null || example === undefined || !schema || typeof schema !== "object") return [];
  const problem = exampleProblem(example, schema as JsonSchema);
  return problem ? [{ path: "outputExample", message: `Does not satisfy outputSchema: ${problem}` }] : [];
}
