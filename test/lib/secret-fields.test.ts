import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decryptSecret, parseKeyRing } from "../../src/core/secrets/secret-box.ts";
import { headersMaskedWithoutValue, sealAuthConfig, sealHeaders } from "../../src/core/secrets/secret-fields.ts";

const ring = parseKeyRing(env.ENCRYPTION_KEY as string);
const TENANT = "ten_aaaaaaaaaaaaaaaaaaaaaaaa";
const SERVICE = "svc_bbbbbbbbbbbbbbbbbbbbbbbb";
const PAYWALL = "pw_cccccccccccccccccccccccc";
const STORED = /^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/;
const svcAad = (field: string) => `${TENANT}|service|${SERVICE}|authConfig.${field}`;
const hdrAad = (key: string) => `${TENANT}|paywall|${PAYWALL}|headers.${key}`;
const owner = { tenantId: TENANT, serviceId: SERVICE };

describe("sealAuthConfig", () => {
  it("encrypts secrets bound to tenant, service and field; keeps names in clear", async () => {
    const sealed = await sealAuthConfig(ring, owner, "custom-header", { headerName: "X-Key", headerValue: "s3cret" });
    expect(Object.keys(sealed).sort()).toEqual(["headerName", "headerValue"]);
    expect(sealed.headerName).toBe("X-Key");
    expect(sealed.headerValue).toMatch(STORED);
    expect(await decryptSecret(ring, sealed.headerValue as string, svcAad("headerValue"))).toBe("s3cret");
    await expect(decryptSecret(ring, sealed.headerValue as string, svcAad("headerName"))).rejects.toThrow();
    await expect(
      decryptSecret(ring, sealed.headerValue as string, `ten_x|service|${SERVICE}|authConfig.headerValue`),
    ).rejects.toThrow();
  });

  it("encrypts every secret of x-api-key-secret separately", async () => {
    const sealed = await sealAuthConfig(ring, owner, "x-api-key-secret", { apiKey: "same", apiSecret: "same" });
    expect(sealed.apiKey).not.toBe(sealed.apiSecret);
    expect(await decryptSecret(ring, sealed.apiKey as string, svcAad("apiKey"))).toBe("same");
    expect(await decryptSecret(ring, sealed.apiSecret as string, svcAad("apiSecret"))).toBe("same");
  });

  it("a fresh IV each time: sealing the same value twice differs", async () => {
    const a = await sealAuthConfig(ring, owner, "bearer", { bearerToken: "t" });
    const b = await sealAuthConfig(ring, owner, "bearer", { bearerToken: "t" });
    expect(a.bearerToken).not.toBe(b.bearerToken);
  });

  it("*** keeps the stored ciphertext of that field; other fields are re-encrypted", async () => {
    const stored = await sealAuthConfig(ring, owner, "x-api-key-secret", { apiKey: "k1", apiSecret: "s1" });
    const next = await sealAuthConfig(ring, owner, "x-api-key-secret", { apiKey: "***", apiSecret: "s2" }, stored);
    expect(next.apiKey).toBe(stored.apiKey);
    expect(next.apiSecret).not.toBe(stored.apiSecret);
    expect(await decryptSecret(ring, next.apiSecret as string, svcAad("apiSecret"))).toBe("s2");
  });

  it("stores only the method's fields", async () => {
    const sealed = await sealAuthConfig(ring, owner, "bearer", { bearerToken: "t", stray: "x" });
    expect(Object.keys(sealed)).toEqual(["bearerToken"]);
    expect(await sealAuthConfig(ring, owner, "none", {})).toEqual({});
    expect(await sealAuthConfig(ring, owner, "bearer-customer", {})).toEqual({});
  });

  it("never contains the plaintext", async () => {
    const sealed = await sealAuthConfig(ring, owner, "query-param", { paramName: "k", paramValue: "plaintext-value-123" });
    expect(JSON.stringify(sealed)).not.toContain("plaintext-value-123");
  });
});

describe("sealHeaders", () => {
  const who = { tenantId: TENANT, paywallId: PAYWALL };

  it("encrypts each value bound to its key, in order", async () => {
    const sealed = await sealHeaders(ring, who, [
      { key: "X-A", value: "a" },
      { key: "X-B", value: "b" },
    ]);
    expect(sealed.map((h) => h.key)).toEqual(["X-A", "X-B"]);
    expect(await decryptSecret(ring, sealed[0]?.value as string, hdrAad("X-A"))).toBe("a");
    expect(await decryptSecret(ring, sealed[1]?.value as string, hdrAad("X-B"))).toBe("b");
    await expect(decryptSecret(ring, sealed[0]?.value as string, hdrAad("X-B"))).rejects.toThrow();
    expect(JSON.stringify(sealed)).not.toMatch(/"value":"[ab]"/);
  });

  it("*** keeps the stored value of the same key; new values are encrypted; dropped keys vanish", async () => {
    const stored = await sealHeaders(ring, who, [
      { key: "Keep", value: "k" },
      { key: "Drop", value: "d" },
    ]);
    const next = await sealHeaders(
      ring,
      who,
      [
        { key: "Keep", value: "***" },
        { key: "New", value: "n" },
      ],
      stored,
    );
    expect(next.map((h) => h.key)).toEqual(["Keep", "New"]);
    expect(next[0]?.value).toBe(stored[0]?.value);
    expect(await decryptSecret(ring, next[1]?.value as string, hdrAad("New"))).toBe("n");
  });

  it("headersMaskedWithoutValue: keys sent as *** with nothing stored", () => {
    const stored = [{ key: "A", value: "v1.k1.x.y" }];
    expect(headersMaskedWithoutValue([{ key: "A", value: "***" }], stored)).toEqual([]);
    expect(
      headersMaskedWithoutValue(
        [
          { key: "A", value: "***" },
          { key: "B", value: "***" },
          { key: "C", value: "c" },
        ],
        stored,
      ),
    ).toEqual(["B"]);
    expect(headersMaskedWithoutValue([{ key: "A", value: "***" }])).toEqual(["A"]);
    expect(headersMaskedWithoutValue([])).toEqual([]);
  });
});
