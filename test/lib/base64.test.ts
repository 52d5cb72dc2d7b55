import { describe, expect, it } from "vitest";
import { encodeBase64, encodeBase64Url } from "../../src/lib/base64.ts";

describe("encodeBase64 / encodeBase64Url", () => {
  it("are RFC 4648's test vectors, base64url unpadded with its own two characters", () => {
    const bytes = (s: string) => new TextEncoder().encode(s);
    expect(["", "f", "fo", "foo", "foob", "fooba", "foobar"].map((s) => encodeBase64(bytes(s)))).toEqual([
      "",
      "Zg==",
      "Zm8=",
      "Zm9v",
      "Zm9vYg==",
      "Zm9vYmE=",
      "Zm9vYmFy",
    ]);
    expect(encodeBase64Url(Uint8Array.of(0xfb, 0xff, 0xbf))).toBe("-_-_");
    expect(encodeBase64Url(Uint8Array.of(0xfb, 0xff))).toBe("-_8");
  });

  it("take a sealed answer's size (256 KiB and more) without overflowing the stack", () => {
    const big = new Uint8Array(300 * 1024).map((_, i) => i % 251);
    const encoded = encodeBase64(big);
    expect(Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0))).toEqual(big);
    expect(encodeBase64Url(big)).toBe(encoded.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""));
  });
});
