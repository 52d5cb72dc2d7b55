import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decryptSecret,
  encryptSecret,
  generateKeyRingSecret,
  isCurrentKey,
  type KeyRing,
  MASK,
  parseKeyRing,
  secretAad,
} from "../../src/core/secrets/secret-box.ts";

// ---- helpers (independent of the module under test) ----

const bytes = (start: number, length = 32) => Uint8Array.from({ length }, (_, i) => (start + i) & 0xff);
const b64 = (data: Uint8Array) => btoa(String.fromCharCode(...data));
const b64url = (data: Uint8Array) => b64(data).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const fromB64url = (text: string) => {
  const std = text.replaceAll("-", "+").replaceAll("_", "/");
  return Uint8Array.from(atob(std + "=".repeat((4 - (std.length % 4)) % 4)), (c) => c.charCodeAt(0));
};

const K1 = b64(bytes(0));
const K2 = b64(bytes(100));
const K3 = b64(bytes(200));
const RING_K1 = `k1:${K1}`;
const RING_K1_K2 = `k1:${K1},k2:${K2}`;
const RING_K2 = `k2:${K2}`;
const ALL_KEY_MATERIAL = [K1, K2, K3];

const AAD = secretAad("ten_aaaaaaaaaaaaaaaaaaaaaaaa", "service", "svc_bbbbbbbbbbbbbbbbbbbbbbbb", "authConfig.bearerToken");
const PLAINTEXT = "s3cr3t-t0ken-value";

const STORED_PATTERN = /^v1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]+)$/;

function split(stored: string) {
  const match = STORED_PATTERN.exec(stored);
  if (!match) throw new Error("unexpected format");
  return { keyId: match[1]!, iv: match[2]!, sealed: match[3]! };
}

/** Rejects with an Error whose message holds none of the forbidden strings. */
async function expectCleanRejection(promise: Promise<unknown>, forbidden: string[]) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a rejection").toBeInstanceOf(Error);
  const message = (error as Error).message;
  for (const secret of forbidden.filter((s) => s.length >= 4)) expect(message).not.toContain(secret);
  return message;
}

function expectCleanThrow(fn: () => unknown, forbidden: string[]) {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, "expected a throw").toBeInstanceOf(Error);
  const message = (error as Error).message;
  for (const secret of forbidden.filter((s) => s.length >= 4)) expect(message).not.toContain(secret);
  return message;
}

// ---- parseKeyRing / generateKeyRingSecret ----

describe("parseKeyRing", () => {
  it("parses one entry; its id is current", () => {
    const ring = parseKeyRing(RING_K1);
    expect(ring.currentId).toBe("k1");
    expect(ring.keyIds).toEqual(["k1"]);
  });

  it("the last entry is current; all are listed", () => {
    const ring = parseKeyRing(`old:${K1},mid_1:${K2},new-2:${K3}`);
    expect(ring.currentId).toBe("new-2");
    expect(ring.keyIds).toEqual(["old", "mid_1", "new-2"]);
  });

  it("accepts unpadded base64 and whitespace around entries (a trailing newline from a secrets tool)", () => {
    const ring = parseKeyRing(` k1:${K1.replace(/=+$/, "")} ,\n k2:${K2}\n`);
    expect(ring.keyIds).toEqual(["k1", "k2"]);
  });

  it("accepts a 32-character key id", () => {
    expect(parseKeyRing(`${"a".repeat(32)}:${K1}`).currentId).toBe("a".repeat(32));
  });

  it("caches the ring per secret string", () => {
    expect(parseKeyRing(RING_K1_K2)).toBe(parseKeyRing(RING_K1_K2));
    expect(parseKeyRing(RING_K1)).not.toBe(parseKeyRing(RING_K1_K2));
  });

  it("the ring object carries no key material (safe to log or serialize)", () => {
    const ring = parseKeyRing(RING_K1_K2);
    expect(Object.keys(ring).sort()).toEqual(["currentId", "keyIds"]);
    const dump = JSON.stringify(ring);
    for (const key of ALL_KEY_MATERIAL) expect(dump).not.toContain(key);
    expect(Object.isFrozen(ring)).toBe(true);
  });

  it("parses the test secret configured for the Worker", () => {
    expect(parseKeyRing(env.ENCRYPTION_KEY).currentId).toBe("k1");
  });

  const short = b64(bytes(7, 31));
  const long = b64(bytes(7, 33));
  const cases: [string, string][] = [
    ["empty", ""],
    ["blank", "  \n"],
    ["no colon (a bare key)", K1],
    ["empty key id", `:${K1}`],
    ["key id with a bad character", `k.1:${K1}`],
    ["key id with a space", `k 1:${K1}`],
    ["key id of 33 characters", `${"a".repeat(33)}:${K1}`],
    ["key material in the id slot", `${K2}:${K1}`],
    ["duplicate key id", `k1:${K1},k1:${K2}`],
    ["31-byte key", `k1:${short}`],
    ["33-byte key", `k1:${long}`],
    ["empty key", "k1:"],
    ["non-base64 characters", `k1:${K1.replace("A", "*")}`],
    ["base64url instead of base64", `k1:${b64(bytes(250)).replaceAll("+", "-").replaceAll("/", "_")}`],
    ["bad padding", `k1:${K1}==`],
    ["non-canonical trailing bits", `k1:${K1.slice(0, 42)}${K1[42] === "f" ? "g" : "f"}=`],
    ["empty entry (trailing comma)", `k1:${K1},`],
    ["empty entry (double comma)", `k1:${K1},,k2:${K2}`],
    ["second entry bad", `k1:${K1},k2:${K3.slice(0, 20)}`],
  ];
  for (const [name, secret] of cases) {
    it(`rejects ${name} without echoing key material`, () => {
      const message = expectCleanThrow(
        () => parseKeyRing(secret),
        [...ALL_KEY_MATERIAL, short, long, secret.trim(), ...secret.split(/[,:]/)],
      );
      expect(message).toMatch(/ENCRYPTION_KEY/);
    });
  }

  it("does not cache a rejected secret", () => {
    expect(() => parseKeyRing("k1:nope")).toThrow();
    expect(() => parseKeyRing("k1:nope")).toThrow();
  });
});

describe("generateKeyRingSecret", () => {
  it("returns a parseable one-key ring with 32 fresh bytes", async () => {
    const secret = generateKeyRingSecret();
    expect(secret).toMatch(/^k1:[A-Za-z0-9+/]{43}=$/);
    expect(atob(secret.slice(3))).toHaveLength(32);
    const ring = parseKeyRing(secret);
    expect(ring.currentId).toBe("k1");
    expect(await decryptSecret(ring, await encryptSecret(ring, PLAINTEXT, AAD), AAD)).toBe(PLAINTEXT);
  });

  it("takes a key id, and differs on every call", () => {
    const secrets = new Set(Array.from({ length: 20 }, () => generateKeyRingSecret("k7")));
    expect(secrets.size).toBe(20);
    for (const s of secrets) expect(s.startsWith("k7:")).toBe(true);
  });

  it("refuses an invalid key id", () => {
    expect(() => generateKeyRingSecret("bad id")).toThrow();
    expect(() => generateKeyRingSecret("")).toThrow();
    expect(() => generateKeyRingSecret("x".repeat(33))).toThrow();
  });
});

// ---- encryptSecret / decryptSecret ----

describe("encryptSecret and decryptSecret", () => {
  const ring = parseKeyRing(RING_K1);

  const samples: [string, string][] = [
    ["empty", ""],
    ["ascii", PLAINTEXT],
    ["unicode", "pässwörd 🔑 日本語 ‮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u0000 end"],
    ["separators", "a.b|c:d,e=f+g/h"],
    ["the mask itself", MASK],
    ["long", "x".repeat(100_000)],
  ];
  for (const [name, plaintext] of samples) {
    it(`round-trips ${name}`, async () => {
      const stored = await encryptSecret(ring, plaintext, AAD);
      const parts = split(stored);
      expect(parts.keyId).toBe("k1");
      expect(fromB64url(parts.iv)).toHaveLength(12);
      expect(fromB64url(parts.sealed)).toHaveLength(new TextEncoder().encode(plaintext).length + 16);
      if (plaintext.length >= 4) expect(stored).not.toContain(plaintext);
      expect(await decryptSecret(ring, stored, AAD)).toBe(plaintext);
    });
  }

  it("round-trips arbitrary strings and AADs (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme", minLength: 1 }), async (plaintext, aad) => {
        expect(await decryptSecret(ring, await encryptSecret(ring, plaintext, aad), aad)).toBe(plaintext);
      }),
      { numRuns: 200 },
    );
  });

  it("uses a fresh IV for every encryption of the same value", async () => {
    const stored = await Promise.all(Array.from({ length: 200 }, () => encryptSecret(ring, PLAINTEXT, AAD)));
    expect(new Set(stored).size).toBe(stored.length);
    expect(new Set(stored.map((s) => split(s).iv)).size).toBe(stored.length);
    expect(new Set(stored.map((s) => split(s).sealed)).size).toBe(stored.length);
    for (const s of stored.slice(0, 5)) expect(await decryptSecret(ring, s, AAD)).toBe(PLAINTEXT);
  });

  it("reads a value sealed independently with WebCrypto (format: AES-256-GCM, UTF-8 AAD, iv | ciphertext+tag)", async () => {
    const key = await crypto.subtle.importKey("raw", bytes(0), "AES-GCM", false, ["encrypt"]);
    const iv = bytes(42, 12);
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(AAD) },
        key,
        new TextEncoder().encode("known ✓"),
      ),
    );
    const stored = `v1.k1.${b64url(iv)}.${b64url(sealed)}`;
    expect(await decryptSecret(ring, stored, AAD)).toBe("known ✓");
    expect(isCurrentKey(ring, stored)).toBe(true);
  });

  it("writes a value WebCrypto opens independently", async () => {
    const stored = await encryptSecret(ring, "known ✓", AAD);
    const parts = split(stored);
    const key = await crypto.subtle.importKey("raw", bytes(0), "AES-GCM", false, ["decrypt"]);
    const opened = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromB64url(parts.iv), additionalData: new TextEncoder().encode(AAD) },
      key,
      fromB64url(parts.sealed),
    );
    expect(new TextDecoder().decode(opened)).toBe("known ✓");
  });

  it("refuses a plaintext with a lone surrogate (it would not round-trip)", async () => {
    await expectCleanRejection(encryptSecret(ring, "abc\ud800def", AAD), ["abc\ud800def"]);
  });

  it("refuses an object that is not a parsed ring", async () => {
    const fake = { currentId: "k1", keyIds: ["k1"] } as KeyRing;
    await expect(encryptSecret(fake, PLAINTEXT, AAD)).rejects.toThrow();
    const stored = await encryptSecret(ring, PLAINTEXT, AAD);
    await expect(decryptSecret(fake, stored, AAD)).rejects.toThrow();
  });
});

describe("tampering", () => {
  const ring = parseKeyRing(RING_K1_K2);

  function flipBit(text: string, index: number, bit: number) {
    const data = fromB64url(text);
    data[index]! ^= 1 << bit;
    return b64url(data);
  }

  it("every single-bit flip in the IV fails", async () => {
    const stored = await encryptSecret(ring, PLAINTEXT, AAD);
    const { keyId, iv, sealed } = split(stored);
    for (let i = 0; i < 12; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const forged = `v1.${keyId}.${flipBit(iv, i, bit)}.${sealed}`;
        await expectCleanRejection(decryptSecret(ring, forged, AAD), [PLAINTEXT, sealed, forged, K1, K2]);
      }
    }
  });

  it("every single-bit flip in the ciphertext or tag fails", async () => {
    const stored = await encryptSecret(ring, PLAINTEXT, AAD);
    const { keyId, iv, sealed } = split(stored);
    const length = fromB64url(sealed).length;
    expect(length).toBe(PLAINTEXT.length + 16);
    for (let i = 0; i < length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const forged = `v1.${keyId}.${iv}.${flipBit(sealed, i, bit)}`;
        await expectCleanRejection(decryptSecret(ring, forged, AAD), [PLAINTEXT, sealed, forged, K1, K2]);
      }
    }
  });

  it("every single-character change of the stored string fails (no malleable base64)", async () => {
    const stored = await encryptSecret(ring, "pin", AAD);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/";
    for (let i = 0; i < stored.length; i++) {
      const replacement = alphabet[(alphabet.indexOf(stored[i]!) + 1) % alphabet.length]!;
      const forged = stored.slice(0, i) + replacement + stored.slice(i + 1);
      await expect(decryptSecret(ring, forged, AAD), `position ${i}`).rejects.toThrow();
    }
  });

  it("truncated or extended ciphertexts fail", async () => {
    const stored = await encryptSecret(ring, PLAINTEXT, AAD);
    const { keyId, iv, sealed } = split(stored);
    const data = fromB64url(sealed);
    for (const variant of [data.slice(0, -1), data.slice(1), data.slice(0, 16), data.slice(-16), new Uint8Array([...data, 0])]) {
      await expect(decryptSecret(ring, `v1.${keyId}.${iv}.${b64url(variant)}`, AAD)).rejects.toThrow();
    }
  });

  it("relabelling a ciphertext with another key id of the ring fails", async () => {
    const stored = await encryptSecret(ring, PLAINTEXT, AAD);
    const { iv, sealed } = split(stored);
    expect(split(stored).keyId).toBe("k2");
    await expect(decryptSecret(ring, `v1.k1.${iv}.${sealed}`, AAD)).rejects.toThrow();
  });

  it("the same key id bound to different key material fails", async () => {
    const stored = await encryptSecret(parseKeyRing(RING_K1), PLAINTEXT, AAD);
    await expectCleanRejection(decryptSecret(parseKeyRing(`k1:${K3}`), stored, AAD), [PLAINTEXT, stored, K1, K3]);
  });
});

describe("additional data binds a ciphertext to its row and field", () => {
  const ring = parseKeyRing(RING_K1);
  const tenant = "ten_aaaaaaaaaaaaaaaaaaaaaaaa";
  const other = "ten_cccccccccccccccccccccccc";
  const svc = "svc_bbbbbbbbbbbbbbbbbbbbbbbb";

  const moves: [string, string][] = [
    ["another tenant's row", secretAad(other, "service", svc, "authConfig.bearerToken")],
    ["another row of the same tenant", secretAad(tenant, "service", "svc_dddddddddddddddddddddddd", "authConfig.bearerToken")],
    ["another field of the same row", secretAad(tenant, "service", svc, "authConfig.apiSecret")],
    ["another resource type", secretAad(tenant, "paywall", svc, "authConfig.bearerToken")],
    ["an AAD differing only in case", AAD.toUpperCase()],
    ["an empty AAD", ""],
    ["the AAD with a trailing space", `${AAD} `],
  ];
  for (const [name, wrongAad] of moves) {
    it(`moving it to ${name} fails`, async () => {
      const stored = await encryptSecret(ring, PLAINTEXT, AAD);
      expect(await decryptSecret(ring, stored, AAD)).toBe(PLAINTEXT);
      await expectCleanRejection(decryptSecret(ring, stored, wrongAad), [PLAINTEXT, stored, split(stored).sealed, K1]);
    });
  }

  it("a value sealed with an empty AAD does not open with a real one", async () => {
    const stored = await encryptSecret(ring, PLAINTEXT, "");
    await expect(decryptSecret(ring, stored, AAD)).rejects.toThrow();
  });

  it("refuses an ill-formed AAD (lossy UTF-8 would let AADs collide)", async () => {
    await expect(encryptSecret(ring, PLAINTEXT, "t|\ud800")).rejects.toThrow();
    const stored = await encryptSecret(ring, PLAINTEXT, "t|\ufffd");
    await expect(decryptSecret(ring, stored, "t|\ud800")).rejects.toThrow();
  });
});

describe("secretAad", () => {
  it("joins tenant, resource, id and field with '|'", () => {
    expect(secretAad("ten_1", "service", "svc_2", "authConfig.token")).toBe("ten_1|service|svc_2|authConfig.token");
  });

  it("refuses parts that are empty or contain '|' (so distinct tuples never share an AAD)", () => {
    expect(() => secretAad("a|b", "c", "d", "e")).toThrow();
    expect(() => secretAad("a", "b|c", "d", "e")).toThrow();
    expect(() => secretAad("a", "b", "c", "d|e")).toThrow();
    expect(() => secretAad("", "b", "c", "d")).toThrow();
    expect(() => secretAad("a", "b", "", "d")).toThrow();
  });
});

describe("malformed stored values", () => {
  const ring = parseKeyRing(RING_K1);
  const iv = b64url(bytes(1, 12));
  const tag = b64url(bytes(2, 16));

  const cases: [string, string][] = [
    ["empty", ""],
    ["the mask", MASK],
    ["a plaintext", PLAINTEXT],
    ["version only", "v1"],
    ["three parts", `v1.k1.${iv}`],
    ["five parts", `v1.k1.${iv}.${tag}.x`],
    ["unknown version", `v2.k1.${iv}.${tag}`],
    ["upper-case version", `V1.k1.${iv}.${tag}`],
    ["empty key id", `v1..${iv}.${tag}`],
    ["invalid key id", `v1.k$1.${iv}.${tag}`],
    ["empty iv", `v1.k1..${tag}`],
    ["11-byte iv", `v1.k1.${b64url(bytes(1, 11))}.${tag}`],
    ["13-byte iv", `v1.k1.${b64url(bytes(1, 13))}.${tag}`],
    ["empty ciphertext", `v1.k1.${iv}.`],
    ["ciphertext shorter than a tag", `v1.k1.${iv}.${b64url(bytes(2, 15))}`],
    ["standard base64 characters", `v1.k1.${iv}.${b64(bytes(250, 30))}`],
    ["padded base64url", `v1.k1.${iv}.${b64url(bytes(2, 17))}=`],
    ["non-canonical base64url", `v1.k1.${iv}.${b64url(bytes(2, 17)).slice(0, -1)}B`],
    ["impossible base64url length", `v1.k1.${iv}.${tag}AAA`],
    ["surrounding whitespace", ` v1.k1.${iv}.${tag} `],
    ["non-ASCII", `v1.k1.${iv}.${tag}é`],
  ];
  for (const [name, stored] of cases) {
    it(`rejects ${name}`, async () => {
      const message = await expectCleanRejection(decryptSecret(ring, stored, AAD), [stored.trim(), tag, K1]);
      expect(isCurrentKey(ring, stored)).toBe(false);
      return message;
    });
  }

  it("rejects non-strings", async () => {
    await expect(decryptSecret(ring, undefined as unknown as string, AAD)).rejects.toThrow();
    await expect(decryptSecret(ring, null as unknown as string, AAD)).rejects.toThrow();
    expect(isCurrentKey(ring, 42 as unknown as string)).toBe(false);
  });

  it("rejects an unknown key id without revealing the ciphertext", async () => {
    const stored = await encryptSecret(parseKeyRing(`k9:${K3}`), PLAINTEXT, AAD);
    const message = await expectCleanRejection(decryptSecret(ring, stored, AAD), [
      PLAINTEXT,
      stored,
      split(stored).sealed,
      K1,
      K3,
    ]);
    expect(message).toMatch(/unknown key id/);
  });
});

// ---- rotation, the way Unkey tests it ----

describe("key rotation", () => {
  it("encrypt with k1; with [k1, k2] decrypt and re-encrypt with k2; drop k1; everything still decrypts", async () => {
    const values = ["", PLAINTEXT, "ünïcödé 🔐", MASK, "x".repeat(1000)];
    const aad = (i: number) => secretAad("ten_rot", "service", `svc_${i}`, "authConfig.token");

    // 1. only k1
    const ring1 = parseKeyRing(RING_K1);
    const old = await Promise.all(values.map((v, i) => encryptSecret(ring1, v, aad(i))));
    for (const s of old) {
      expect(split(s).keyId).toBe("k1");
      expect(isCurrentKey(ring1, s)).toBe(true);
    }

    // 2. add k2 (now current): old values still open, are stale, and are re-encrypted with k2
    const ring2 = parseKeyRing(RING_K1_K2);
    expect(ring2.currentId).toBe("k2");
    const rotated: string[] = [];
    for (const [i, s] of old.entries()) {
      expect(isCurrentKey(ring2, s)).toBe(false);
      const plaintext = await decryptSecret(ring2, s, aad(i));
      expect(plaintext).toBe(values[i]);
      const fresh = await encryptSecret(ring2, plaintext, aad(i));
      expect(split(fresh).keyId).toBe("k2");
      expect(isCurrentKey(ring2, fresh)).toBe(true);
      rotated.push(fresh);
    }
    // during the rotation both generations open with ring2; an instance still on ring1 cannot open k2 values
    for (const [i, s] of [...old.entries(), ...rotated.entries()]) expect(await decryptSecret(ring2, s, aad(i))).toBe(values[i]);
    await expect(decryptSecret(ring1, rotated[1]!, aad(1))).rejects.toThrow(/unknown key id/);

    // 3. drop k1: everything rotated still decrypts, the old k1 ciphertexts no longer do
    const ring3 = parseKeyRing(RING_K2);
    for (const [i, s] of rotated.entries()) {
      expect(await decryptSecret(ring3, s, aad(i))).toBe(values[i]);
      expect(isCurrentKey(ring3, s)).toBe(true);
    }
    for (const [i, s] of old.entries()) {
      await expectCleanRejection(decryptSecret(ring3, s, aad(i)), [K1, K2, s, split(s).sealed, ...values.filter(Boolean)]);
      expect(isCurrentKey(ring3, s)).toBe(false);
    }
  });
});
