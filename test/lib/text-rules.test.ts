import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { textProblem } from "../../src/lib/text-rules.ts";

const controls = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)),
  ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)),
];
const lineControls = ["\t", "\n", "\r"];

describe("textProblem", () => {
  it("single-line text refuses every control character, tab and line breaks included", () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...controls), fc.string(), (a, c, b) => {
        expect(textProblem(`${a}${c}${b}`, "single-line")).not.toBeNull();
      }),
    );
  });

  it("multi-line text allows tab, LF and CR and refuses every other control character", () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...controls), fc.string(), (a, c, b) => {
        const clean = (s: string) => s.replace(/\p{Cc}/gu, "");
        const problem = textProblem(`${clean(a)}${c}${clean(b)}`, "multi-line");
        expect(problem === null, JSON.stringify(c)).toBe(lineControls.includes(c));
      }),
    );
  });

  const bidi = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"];

  it("single-line text refuses every bidirectional embedding, override and isolate control, and line separators", () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...bidi, "\u2028", "\u2029"), fc.string(), (a, c, b) => {
        expect(textProblem(`${a}${c}${b}`, "single-line"), JSON.stringify(c)).not.toBeNull();
      }),
    );
    // "Invoice" shown, "eciovnI" stored: the override would make a name show another name.
    expect(textProblem("Acme \u202eecioval\u202c Ltd", "single-line")).toMatch(/bidirectional/);
  });

  it("multi-line text refuses them too: a description or guidance is shown in pages and llms.txt", () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...bidi, "\u2028", "\u2029"), fc.string(), (a, c, b) => {
        expect(textProblem(`${a}${c}${b}`, "multi-line"), JSON.stringify(c)).not.toBeNull();
      }),
    );
    expect(textProblem("Pay here \u202etxt.exe", "multi-line")).toMatch(/bidirectional/);
  });

  it("single-line text keeps right-to-left scripts and the plain direction marks", () => {
    for (const text of ["שלום עולם", "مرحبا", "abc \u200f שלום", "\u200e(1)", "Zero\u200bwidth"]) {
      expect(textProblem(text, "single-line"), text).toBeNull();
    }
  });

  it("accepts printable Unicode in both kinds, and refuses lone surrogates", () => {
    for (const text of ["Weather API", "Météo — 天気 🌦", "", "a  b"]) {
      expect(textProblem(text, "single-line")).toBeNull();
      expect(textProblem(text, "multi-line")).toBeNull();
    }
    expect(textProblem("Line 1\r\nLine 2\n\tindented", "multi-line")).toBeNull();
    expect(textProblem("a\ud800b", "single-line")).toMatch(/well-formed/);
    expect(textProblem("a\udc00", "multi-line")).toMatch(/well-formed/);
  });
});
