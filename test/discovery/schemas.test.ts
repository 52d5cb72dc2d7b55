// The pure parts of discovery's inputs: the JSON Schema subset a paywall may carry, the examples made from it, and
// micro-USDC as the decimal USD documents price in.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  exampleOf,
  exampleProblem,
  type JsonSchema,
  jsonSchemaIssues,
  outputExampleIssues,
} from "../../src/core/discovery/json-schema.ts";
import { usdcDecimal } from "../../src/core/money/usdc.ts";

describe("usdcDecimal: integer micro-USDC as a plain decimal", () => {
  it.each([
    ["10000", "0.01"],
    ["1", "0.000001"],
    ["1000000", "1"],
    ["1230000", "1.23"],
    ["250000", "0.25"],
    ["1000000000000000", "1000000000"],
    ["123456789", "123.456789"],
  ])("%s → %s", (micro, usd) => expect(usdcDecimal(micro)).toBe(usd));

  it("is exact for every price: the decimal read back in micro-units is the price (no floating point)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 1_000_000_000_000_000n }), (micro) => {
        const [whole, fraction = ""] = usdcDecimal(micro).split(".");
        expect(BigInt(`${whole}${fraction.padEnd(6, "0")}`)).toBe(micro);
        expect(fraction).not.toMatch(/0$/);
      }),
    );
  });
});

describe("jsonSchemaIssues: the documented subset of JSON Schema 2020-12", () => {
  const input = (schema: unknown) => jsonSchemaIssues(schema, ["object"]);

  it("accepts object schemas built from the subset's keywords", () => {
    expect(
      input({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        title: "Query",
        properties: {
          city: { type: "string", minLength: 1, maxLength: 80, pattern: "^[A-Za-z ]+$", examples: ["Lisbon"] },
          days: { type: "integer", minimum: 1, maximum: 7, default: 1 },
          units: { enum: ["metric", "imperial"] },
          tags: { type: "array", items: { type: "string" }, maxItems: 5, uniqueItems: true },
          at: { type: ["string", "null"], format: "date-time" },
          filter: { anyOf: [{ type: "string" }, { type: "object", additionalProperties: { type: "number" } }] },
        },
        required: ["city"],
        additionalProperties: false,
      }),
    ).toEqual([]);
    expect(jsonSchemaIssues({ type: "array", items: { type: "object" } }, ["object", "array"])).toEqual([]);
  });

  it.each([
    ["a $ref", { type: "object", properties: { a: { $ref: "#/$defs/a" } } }, "properties.a.$ref", /Unknown field/],
    ["$defs", { type: "object", $defs: {} }, "$defs", /Unknown field/],
    ["an unknown keyword", { type: "object", patternProperties: {} }, "patternProperties", /Unknown field/],
    ["an unknown type", { type: "object", properties: { a: { type: "date" } } }, "properties.a.type", /.+/],
    [
      "a regular expression that does not compile",
      { type: "object", properties: { a: { pattern: "(" } } },
      "properties.a.pattern",
      /regular expression/,
    ],
    ["another dialect", { $schema: "http://json-schema.org/draft-07/schema#", type: "object" }, "$schema", /2020-12/],
    ["a root that is not an object", { type: "string" }, "type", /"object"/],
    ["a root without a type", { properties: {} }, "type", /"object"/],
    [
      "a negative bound",
      { type: "object", properties: { a: { type: "string", minLength: -1 } } },
      "properties.a.minLength",
      /.+/,
    ],
  ])("refuses %s, naming where", (_, schema, path, message) => {
    const issues = input(schema);
    expect(issues).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it("bounds size and nesting", () => {
    const wide = {
      type: "object",
      properties: {
        a: { type: "string", description: "d".repeat(900) },
        b: { type: "string", description: "d".repeat(900) },
        c: { type: "string", description: "d".repeat(900) },
        d: { type: "string", description: "d".repeat(900) },
        e: { type: "string", description: "d".repeat(900) },
      },
    };
    expect(input(wide)).toEqual([{ path: "", message: "Larger than 4096 characters of JSON" }]);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10; i++) deep = { type: "object", properties: { n: deep } };
    expect(input(deep)).toEqual([{ path: "", message: "Nested deeper than 16 levels" }]);
  });
});

describe("examples made from a schema", () => {
  const schemas: JsonSchema[] = [
    {
      type: "object",
      properties: {
        city: { type: "string", examples: ["Lisbon"] },
        days: { type: "integer", minimum: 3, maximum: 7 },
        ratio: { type: "number", exclusiveMinimum: 0, multipleOf: 0.5 },
        code: { type: "string", minLength: 12 },
        email: { type: "string", format: "email" },
        mode: { enum: ["fast", "slow"] },
        flag: { type: "boolean" },
        list: { type: "array", items: { type: "integer" }, minItems: 2 },
        nested: { type: "object", properties: { id: { type: "string", format: "uuid" } }, required: ["id"] },
        either: { anyOf: [{ type: "string" }, { type: "null" }] },
        optional: { type: "string" },
      },
      required: ["city", "days", "ratio", "code", "email", "mode", "flag", "list", "nested", "either"],
      additionalProperties: false,
    },
    { type: "object", properties: { text: { type: "string", maxLength: 3 } }, required: ["text"] },
    { type: "array", items: { type: "object", properties: { a: { const: 1 } }, required: ["a"] }, minItems: 1 },
  ];

  it.each(schemas.map((s, i) => [i, s] as const))("#%s satisfies its schema, required properties only", (_, schema) => {
    const example = exampleOf(schema);
    expect(exampleProblem(example, schema)).toBeNull();
    if (schema.type === "object") expect(Object.keys(example as object).sort()).toEqual([...(schema.required ?? [])].sort());
  });

  it("a value that breaks the schema is named with its path", () => {
    expect(exampleProblem({ city: 3 }, schemas[1] as JsonSchema)).toMatch(/^text: |text/);
    expect(exampleProblem({}, { type: "object", required: ["a"], properties: { a: { type: "string" } } })).toMatch(/a/);
  });

  it("a pattern is never run in the Worker (no expression of a tenant's), so it is not checked here", () => {
    expect(
      exampleProblem({ a: "zzz" }, { type: "object", properties: { a: { type: "string", pattern: "^(a+)+$" } } }),
    ).toBeNull();
  });

  it("outputExample must satisfy outputSchema when both are set", () => {
    const schema = { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] };
    expect(outputExampleIssues({ tempC: 1 }, schema)).toEqual([]);
    expect(outputExampleIssues({ tempC: "warm" }, schema)).toEqual([
      { path: "outputExample", message: expect.stringMatching(/^Does not satisfy outputSchema: tempC/) },
    ]);
    expect(outputExampleIssues(null, schema)).toEqual([]);
    expect(outputExampleIssues({ any: 1 }, null)).toEqual([]);
  });
});
