import { describe, expect, it } from "vitest";
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from "../../src/lib/base64.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const RFC_4648 = ["", "f", "fo", "foo", "foob", "fooba", "foobar"];

describe("encodeBase64 / encodeBase64Url", () => {
  it("are RFC 4648's test vectors, base64url unpadded with its own two characters", () => {
    expect(RFC_4648.map((s) => encodeBase64(bytes(s)))).toEqual(["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"]);
    expect(encodeBase64Url(Uint8Array.of(0xfb, 0xff, 0xbf))).toBe("-_-_");
    expect(encodeBase64Url(Uint8Array.of(0xfb, 0xff))).toBe("-_8");
  });

  it("take a sealed answer's size (256 KiB and more) without overflowing the stack", () => {
    const big = new Uint8Array(300 * 1024).map((_, i) => i % 251);
    const encoded = encodeBase64(big);
    expect(Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0))).toEqual(big);
    expect(encodeBase64Url(big)).toBe(encoded.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""));
    expect(decodeBase64(encoded)).toEqual(big);
    expect(decodeBase64Url(encodeBase64Url(big))).toEqual(big);
  });
});

describe("decodeBase64", () => {
  it("reads RFC 4648's test vectors with their padding or without it", () => {
    for (const s of RFC_4648) {
      const text = encodeBase64(bytes(s));
      expect(decodeBase64(text)).toEqual(bytes(s));
      expect(decodeBase64(text.replace(/=+$/, ""))).toEqual(bytes(s));
    }
    expect(decodeBase64("+/+/")).toEqual(Uint8Array.of(0xfb, 0xff, 0xbf));
  });

  it.each([
    ["a character outside the alphabet", "Zm9v!"],
    ["whitespace", "Zm9v Yg=="],
    ["base64url's characters", "-_-_"],
    ["padding that does not complete the last quantum", "Zg="],
    ["padding with a full last quantum", "Zm9vYg==="],
    ["padding inside", "Zg==Zg=="],
    ["a lone trailing character (6 bits, no byte)", "Zm9vY"],
    ["unused trailing bits set (a second spelling of 'f')", "Zh=="],
    ["unused trailing bits set (a second spelling of 'fo')", "Zm9"],
  ])("refuses %s, with undefined and no throw", (_, text) => {
    expect(decodeBase64(text)).toBeUndefined();
  });
});

describe("decodeBase64Url", () => {
  it("reads what encodeBase64Url writes, its own two characters included", () => {
    expect(decodeBase64Url("-_-_")).toEqual(Uint8Array.of(0xfb, 0xff, 0xbf));
    expect(decodeBase64Url("-_8")).toEqual(Uint8Array.of(0xfb, 0xff));
    for (const s of RFC_4648) expect(decodeBase64Url(encodeBase64Url(bytes(s)))).toEqual(bytes(s));
  });

  it.each([
    ["standard base64's characters", "+/+/"],
    ["padding", "Zg=="],
    ["a lone trailing character", "Zm9vY"],
    ["unused trailing bits set", "-_9"],
    ["a character outside the alphabet", "Zm9v."],
  ])("refuses %s", (_, text) => {
    expect(decodeBase64Url(text)).toBeUndefined();
  });
});
