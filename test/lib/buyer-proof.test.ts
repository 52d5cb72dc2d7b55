import type { PaymentPayload } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { buyerProof } from "../../src/gateway/paid-answer.ts";
import { CHALLENGE_NONCE, challengeNonceOf } from "../../src/gateway/x402/sdk.ts";

const nonce = "0123456789abcdef0123456789abcdef";
const payloadWith = (extensions?: Record<string, unknown>) => ({ x402Version: 2, extensions }) as unknown as PaymentPayload;

describe("buyerProof", () => {
  it("is none without a secret, whatever else is sent", async () => {
    expect(await buyerProof(undefined, undefined)).toBeUndefined();
    expect(await buyerProof("", "Bearer token")).toBeUndefined();
  });

  it("is the same for the same secret and Authorization, and differs when either differs", async () => {
    const proof = await buyerProof(nonce, "Bearer alice");
    expect(proof).toMatch(/^[0-9a-f]{64}$/);
    expect(await buyerProof(nonce, "Bearer alice")).toBe(proof);
    expect(await buyerProof(nonce, "Bearer bob")).not.toBe(proof);
    expect(await buyerProof(nonce, undefined)).not.toBe(proof);
    expect(await buyerProof(`${nonce.slice(1)}0`, "Bearer alice")).not.toBe(proof);
  });
});

describe("challengeNonceOf", () => {
  it("reads the nonce a payment copied from its 402", () => {
    expect(challengeNonceOf(payloadWith({ [CHALLENGE_NONCE]: { info: { nonce } } }))).toBe(nonce);
  });

  it.each([
    ["no extensions", undefined],
    ["no nonce", { "payment-identifier": { info: { id: "pay_1234567890abcdef" } } }],
    ["a nonce of another shape", { [CHALLENGE_NONCE]: { info: { nonce: "short" } } }],
    ["a nonce that is not a string", { [CHALLENGE_NONCE]: { info: { nonce: 42 } } }],
    ["upper-case hex", { [CHALLENGE_NONCE]: { info: { nonce: nonce.toUpperCase() } } }],
  ])("is none with %s", (_, extensions) => {
    expect(challengeNonceOf(payloadWith(extensions as Record<string, unknown> | undefined))).toBeUndefined();
  });
});
