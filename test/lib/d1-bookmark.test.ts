import { describe, expect, it } from "vitest";
import { isBookmark, sessionConstraint } from "../../src/lib/d1-bookmark.ts";

const B = "0000000c-00000004-00004fd8-0c3e87bb37b3db5cc52eedb93cd3b96b";

describe("sessionConstraint", () => {
  it("a write starts at the primary, whatever bookmark it carries", () => {
    for (const method of ["POST", "PATCH", "DELETE", "PUT"]) {
      expect(sessionConstraint(method, undefined)).toBe("first-primary");
      expect(sessionConstraint(method, B)).toBe("first-primary");
    }
  });

  it("a read starts at the bookmark it carries, else anywhere", () => {
    expect(sessionConstraint("GET", B)).toBe(B);
    expect(sessionConstraint("HEAD", ` ${B} `)).toBe(B);
    expect(sessionConstraint("GET", undefined)).toBe("first-unconstrained");
  });

  it("a read with something that is not a bookmark: undefined (refused), never passed to D1", () => {
    for (const bad of ["", "first-primary", "first-unconstrained", B.toUpperCase(), `${B}0`, B.slice(0, 26)]) {
      expect(sessionConstraint("GET", bad), bad).toBeUndefined();
      expect(isBookmark(bad)).toBe(false);
    }
  });
});
