import { describe, expect, it } from "vitest";
import {
  API_KEY_PATTERN,
  effectiveKeyStatus,
  generateApiKey,
  hashApiKey,
  KEY_PREFIX_LENGTH,
  readApiKey,
} from "../../src/core/keys/api-key.ts";

const KEY = `mpk_${"0123456789abcdef".repeat(4)}`;
const OTHER = `mpk_${"fedcba9876543210".repeat(4)}`;

describe("generateApiKey", () => {
  it("makes mpk_ + 64 lowercase hex, a 12-character prefix of the key, and the key's SHA-256", async () => {
    const { key, keyHash, keyPrefix } = await generateApiKey();
    expect(key).toMatch(/^mpk_[0-9a-f]{64}$/);
    expect(keyPrefix).toHaveLength(12);
    expect(KEY_PREFIX_LENGTH).toBe(12);
    expect(key.startsWith(keyPrefix)).toBe(true);
    expect(keyHash).toBe(await hashApiKey(key));
    expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(keyHash).not.toContain(key.slice(4));
  });

  it("never repeats a key", async () => {
    const keys = await Promise.all(Array.from({ length: 50 }, () => generateApiKey()));
    expect(new Set(keys.map((k) => k.key)).size).toBe(50);
  });

  it("hashes to the known SHA-256 value", async () => {
    // sha256("abc")
    expect(await hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("readApiKey", () => {
  it("reads `Authorization: Bearer <key>`", () => {
    expect(readApiKey(`Bearer ${KEY}`, undefined)).toEqual({ ok: true, key: KEY });
  });

  it.each(["bearer", "BEARER", "BeArEr"])("accepts the scheme written %s (schemes are case-insensitive)", (scheme) => {
    expect(readApiKey(`${scheme} ${KEY}`, undefined)).toEqual({ ok: true, key: KEY });
  });

  it("accepts several spaces or a tab after the scheme, and trailing whitespace", () => {
    expect(readApiKey(`Bearer   ${KEY}`, undefined)).toEqual({ ok: true, key: KEY });
    expect(readApiKey(`Bearer\t${KEY}`, undefined)).toEqual({ ok: true, key: KEY });
    expect(readApiKey(`Bearer ${KEY}  `, undefined)).toEqual({ ok: true, key: KEY });
  });

  it("reads `X-Api-Key: <key>`, trimmed", () => {
    expect(readApiKey(undefined, KEY)).toEqual({ ok: true, key: KEY });
    expect(readApiKey(undefined, `  ${KEY} `)).toEqual({ ok: true, key: KEY });
  });

  it("accepts both headers when they carry the same key", () => {
    expect(readApiKey(`Bearer ${KEY}`, KEY)).toEqual({ ok: true, key: KEY });
  });

  it("refuses two different keys as a conflict, whichever is valid", () => {
    expect(readApiKey(`Bearer ${KEY}`, OTHER)).toEqual({ ok: false, reason: "conflict" });
    expect(readApiKey(`Bearer ${KEY}`, "mpk_nope")).toEqual({ ok: false, reason: "conflict" });
    expect(readApiKey(`Bearer mpk_nope`, KEY)).toMatchObject({ ok: false });
  });

  it("reports a missing key when no header carries one", () => {
    expect(readApiKey(undefined, undefined)).toEqual({ ok: false, reason: "missing" });
    expect(readApiKey(undefined, "")).toEqual({ ok: false, reason: "missing" });
    expect(readApiKey(undefined, "   ")).toEqual({ ok: false, reason: "missing" });
  });

  it.each([
    ["another scheme", `Basic ${KEY}`],
    ["the key without a scheme", KEY],
    ["a scheme without a key", "Bearer"],
    ["a scheme glued to the key", `Bearer${KEY}`],
    ["two tokens", `Bearer ${KEY} ${KEY}`],
    ["an empty header", ""],
    ["a token scheme", `Token ${KEY}`],
  ])("refuses an Authorization header with %s", (_, header) => {
    expect(readApiKey(header, undefined)).toEqual({ ok: false, reason: "malformed" });
  });

  const malformedKeys: [string, string][] = [
    ["uppercase hex", `mpk_${"0123456789ABCDEF".repeat(4)}`],
    ["an uppercase prefix", `MPK_${"0123456789abcdef".repeat(4)}`],
    ["another prefix", `sk_${"0123456789abcdef".repeat(4)}`],
    ["63 hex characters", KEY.slice(0, -1)],
    ["65 hex characters", `${KEY}0`],
    ["a non-hex character", `${KEY.slice(0, -1)}g`],
    ["the prefix only", "mpk_"],
    ["a key prefix (12 characters)", KEY.slice(0, 12)],
    ["a non-ASCII character", `${KEY.slice(0, -1)}é`],
    ["a SQL fragment", "mpk_' OR 1=1 --"],
  ];

  it.each(malformedKeys)("refuses a key with %s, in either header", (_, key) => {
    expect(API_KEY_PATTERN.test(key)).toBe(false);
    expect(readApiKey(`Bearer ${key}`, undefined)).toEqual({ ok: false, reason: "malformed" });
    expect(readApiKey(undefined, key)).toEqual({ ok: false, reason: "malformed" });
  });
});

describe("effectiveKeyStatus", () => {
  const now = new Date("2027-01-01T00:00:00Z");
  const past = new Date(now.getTime() - 1);
  const future = new Date(now.getTime() + 1);

  it.each([
    ["active", null, "active"],
    ["active", future, "active"],
    ["active", now, "expired"], // expiry is inclusive, as for authentication
    ["active", past, "expired"],
    ["paused", future, "paused"],
    ["paused", past, "expired"],
    ["revoked", past, "revoked"],
    ["revoked", null, "revoked"],
  ] as const)("%s with expiry %s reads %s", (status, expiresAt, effective) => {
    expect(effectiveKeyStatus({ status, expiresAt }, now)).toBe(effective);
  });
});
