import { describe, expect, it } from "vitest";
import { hasPrototypeKey, jsonShapeProblem } from "../../src/lib/json-shape.ts";

const limits = { maxDepth: 3, maxLength: 100 };
const nest = (depth: number): unknown => (depth === 0 ? 1 : { a: nest(depth - 1) });

describe("jsonShapeProblem", () => {
  it("accepts values within depth and size", () => {
    expect(jsonShapeProblem({ a: { b: [1, "x"] } }, limits)).toBeNull();
    expect(jsonShapeProblem(nest(3), limits)).toBeNull();
  });

  it("refuses deeper nesting, even 100,000 levels, without overflowing the stack", () => {
    expect(jsonShapeProblem(nest(4), limits)).toMatch(/deeper than 3/);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonShapeProblem(deep, limits)).toMatch(/deeper/);
  });

  it("refuses oversized values, lone surrogates and __proto__ keys", () => {
    expect(jsonShapeProblem({ a: "x".repeat(200) }, limits)).toMatch(/Larger than 100/);
    expect(jsonShapeProblem({ a: "\ud800" }, limits)).toMatch(/well-formed/);
    expect(jsonShapeProblem({ "\udc00": 1 }, limits)).toMatch(/well-formed/);
    expect(jsonShapeProblem({ a: JSON.parse('{"__proto__": 1}') }, limits)).toMatch(/__proto__/);
  });
});

describe("hasPrototypeKey", () => {
  it("finds a __proto__ key at any depth, also when escaped", () => {
    expect(hasPrototypeKey('{"__proto__":{"x":1}}')).toBe(true);
    expect(hasPrototypeKey('{"a":[{"b":{"__proto__":1}}]}')).toBe(true);
    expect(hasPrototypeKey('{"\\u005f_proto__":1}')).toBe(true);
  });

  it("ignores the word as a value, and leaves malformed JSON to the validator", () => {
    expect(hasPrototypeKey('{"a":"__proto__"}')).toBe(false);
    expect(hasPrototypeKey('{"constructor":{"prototype":1}}')).toBe(false);
    expect(hasPrototypeKey('{"__proto__":')).toBe(false);
  });
});
