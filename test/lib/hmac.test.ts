import { describe, expect, it } from "vitest";
import { hmacKey } from "../../src/lib/hmac.ts";

const mac = async (secret: string, info: string, message: string) =>
  new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret, info), new TextEncoder().encode(message)));

describe("hmacKey", () => {
  it("gives one key per secret and purpose: the same MAC again, another for another purpose or secret", async () => {
    const a = await mac("k1:secret", "siwx-nonce v1", "m");
    expect(a).toHaveLength(32);
    expect(await mac("k1:secret", "siwx-nonce v1", "m")).toEqual(a);
    expect(await mac("k1:secret", "signed-url v1", "m")).not.toEqual(a);
    expect(await mac("k1:other", "siwx-nonce v1", "m")).not.toEqual(a);
  });

  it("derives with HKDF-SHA256 (empty salt), as the signed-URL key is derived", async () => {
    const base = await crypto.subtle.importKey("raw", new TextEncoder().encode("k1:secret"), "HKDF", false, ["deriveKey"]);
    const expected = await crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode("siwx-nonce v1") },
      base,
      { name: "HMAC", hash: "SHA-256", length: 256 },
      false,
      ["sign"],
    );
    const direct = new Uint8Array(await crypto.subtle.sign("HMAC", expected, new TextEncoder().encode("m")));
    expect(await mac("k1:secret", "siwx-nonce v1", "m")).toEqual(direct);
  });
});
