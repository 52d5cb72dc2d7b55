import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodyHash, canonicalJson, IDEMPOTENCY_KEY } from "../../src/lib/idempotency-key.ts";
import { sha256Hex } from "../../src/lib/ids.ts";

describe("IDEMPOTENCY_KEY", () => {
  it("takes 1 to 255 printable ASCII characters", () => {
    for (const ok of ["a", "x".repeat(255), "3f1c9a52-6d0e-4b8e-9a57-0c2f7b1e4d21", "a b", '~!"#']) {
      expect(IDEMPOTENCY_KEY.test(ok), ok).toBe(true);
    }
    for (const bad of ["", "x".repeat(256), "tab\there", "new\nline", "del\u007f", "café", "nul\u0000"]) {
      expect(IDEMPOTENCY_KEY.test(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it("agrees with an independent oracle on any string", () => {
    const oracle = (s: string) =>
      s.length >= 1 && s.length <= 255 && [...s].every((ch) => ch.charCodeAt(0) >= 32 && ch.charCodeAt(0) <= 126);
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: "binary-ascii", maxLength: 20 })), (s) => {
        expect(IDEMPOTENCY_KEY.test(s)).toBe(oracle(s));
      }),
    );
  });
});

describe("canonicalJson", () => {
  it("sorts object keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
    expect(canonicalJson("x")).toBe('"x"');
  });

  it("is the same for any reordering of the same value, and parses back to it", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const shuffled = JSON.parse(
          JSON.stringify(value, (_k, v) =>
            v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
          ),
        );
        expect(canonicalJson(shuffled)).toBe(canonicalJson(value));
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe("bodyHash", () => {
  it("hashes no body as the empty text, a body as its canonical JSON", async () => {
    expect(await bodyHash(undefined)).toBe(await sha256Hex(""));
    expect(await bodyHash({ b: 1, a: 2 })).toBe(await sha256Hex('{"a":2,"b":1}'));
    expect(await bodyHash({ a: 2, b: 1 })).toBe(await bodyHash({ b: 1, a: 2 }));
    expect(await bodyHash({ a: "1" })).not.toBe(await bodyHash({ a: 1 }));
  });
});
