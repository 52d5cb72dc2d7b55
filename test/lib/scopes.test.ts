import { describe, expect, it } from "vitest";
import { hasScope, isScope, parseScopes, SCOPES, type Scope } from "../../src/core/keys/scopes.ts";
import docsPage from "../../src/public/docs.html?raw";
import { ALL_SCOPES, grants } from "../fixtures/spec.ts";

/** From the contract's scope table (docs/api.md): what each scope grants besides itself. */
const IMPLIES = Object.fromEntries(
  SCOPES.map((scope) => [scope, SCOPES.filter((other) => other !== scope && grants([scope], other))]),
) as Record<Scope, Scope[]>;

describe("SCOPES", () => {
  it("are exactly the six scopes of the contract", () => {
    expect([...SCOPES].sort()).toEqual([...ALL_SCOPES].sort());
  });
});

describe("the /docs page's scope table", () => {
  it("lists every scope a key can carry, each once", () => {
    const table = /<h3>Scopes<\/h3>[\s\S]*?<\/table>/.exec(docsPage)?.[0] ?? "";
    const listed = [...table.matchAll(/<tr><td><code>([a-z]+:[a-z]+)<\/code><\/td>/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...SCOPES].sort());
  });
});

describe("hasScope", () => {
  const matrix = SCOPES.flatMap((granted) => SCOPES.map((required) => [granted, required] as const));

  it.each(matrix)("a key with %s → %s", (granted, required) => {
    const expected = granted === required || IMPLIES[granted].includes(required);
    expect(hasScope([granted], required)).toBe(expected);
  });

  it("write implies read, read never implies write", () => {
    expect(hasScope(["services:write"], "services:read")).toBe(true);
    expect(hasScope(["paywalls:write"], "paywalls:read")).toBe(true);
    expect(hasScope(["services:read"], "services:write")).toBe(false);
    expect(hasScope(["paywalls:read"], "paywalls:write")).toBe(false);
  });

  it("does not cross resources", () => {
    expect(hasScope(["services:write"], "paywalls:read")).toBe(false);
    expect(hasScope(["paywalls:write"], "services:read")).toBe(false);
    expect(hasScope(["services:write", "paywalls:write"], "transactions:read")).toBe(false);
  });

  it("grants nothing with no scopes, or with look-alike names", () => {
    for (const required of SCOPES) {
      expect(hasScope([], required)).toBe(false);
      expect(hasScope(["*", "admin", "services:*", "SERVICES:WRITE", " services:write", `${required} `], required)).toBe(false);
    }
  });

  it("finds a scope anywhere in the list", () => {
    expect(hasScope(["events:read", "transactions:read", "paywalls:write"], "paywalls:read")).toBe(true);
  });
});

describe("isScope", () => {
  it("knows the six scopes and nothing else", () => {
    for (const s of SCOPES) expect(isScope(s)).toBe(true);
    for (const s of ["services", "services:delete", "Services:read", "", "events:write"]) expect(isScope(s)).toBe(false);
  });
});

describe("parseScopes", () => {
  it("parses a comma-separated list, trimming spaces", () => {
    expect(parseScopes("services:read, paywalls:write")).toEqual(["services:read", "paywalls:write"]);
  });

  it("drops duplicates and empty items", () => {
    expect(parseScopes("events:read,,events:read, ,transactions:read,")).toEqual(["events:read", "transactions:read"]);
  });

  it("accepts every scope at once", () => {
    expect(parseScopes(SCOPES.join(","))).toEqual([...SCOPES]);
  });

  it("refuses unknown names, naming them", () => {
    expect(() => parseScopes("services:read,services:delete")).toThrow(/services:delete/);
    expect(() => parseScopes("Services:Read")).toThrow(/Services:Read/);
    expect(() => parseScopes("*")).toThrow();
  });

  it("refuses an empty list", () => {
    expect(() => parseScopes("")).toThrow();
    expect(() => parseScopes(" , ,")).toThrow();
  });
});
