import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeRoute } from "../../src/lib/route-pattern.ts";

describe("normalizeRoute", () => {
  it.each([
    ["/", "/"],
    ["//", "/"],
    ["///", "/"],
    ["/v1/forecast", "/v1/forecast"],
    ["/v1/forecast/", "/v1/forecast"],
    ["/v1//forecast", "/v1/forecast"],
    ["//v1///forecast//daily//", "/v1/forecast/daily"],
    ["/v1/forecast?city=paris", "/v1/forecast"],
    ["/v1/forecast/?city=paris", "/v1/forecast"],
    ["/v1/forecast#top", "/v1/forecast"],
    ["/v1/forecast?a=/b#c", "/v1/forecast"],
    ["/?x", "/"],
    ["/Users/:id", "/Users/:id"],
    ["/a/*", "/a/*"],
  ])("%j → %j", (input, output) => {
    expect(normalizeRoute(input)).toBe(output);
  });

  const route = fc
    .array(fc.constantFrom("a", "b", "v1", ":id", "*", "", "/", "?", "#", "x=1", "."), { maxLength: 12 })
    .map((parts) => `/${parts.join("")}`);

  it("always gives one leading slash, no empty segment, no trailing slash but the root, no query or fragment", () => {
    fc.assert(
      fc.property(route, (input) => {
        const out = normalizeRoute(input);
        return out.startsWith("/") && !out.includes("//") && (out === "/" || !out.endsWith("/")) && !/[?#]/.test(out);
      }),
    );
  });

  it("is idempotent", () => {
    fc.assert(fc.property(route, (input) => normalizeRoute(normalizeRoute(input)) === normalizeRoute(input)));
  });

  it("keeps the segments of the path, in order", () => {
    fc.assert(
      fc.property(route, (input) => {
        const path = input.split(/[?#]/)[0] ?? "";
        return (
          normalizeRoute(input) ===
          `/${path
            .split("/")
            .filter((s) => s !== "")
            .join("/")}`
        );
      }),
    );
  });
});
