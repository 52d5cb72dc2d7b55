import { describe, expect, it } from "vitest";
import { credentialIn } from "../../src/gateway/transport/http.ts";

const x402 = { protocol: "x402" } as const;
const mpp = { protocol: "mpp" } as const;

describe("credentialIn: where the HTTP transport finds a method's credential", () => {
  it("x402: the PAYMENT-SIGNATURE header, whatever its case; none without it", () => {
    expect(credentialIn(x402, new Headers({ "Payment-Signature": "eyJ4IjoxfQ" }))).toBe("eyJ4IjoxfQ");
    expect(credentialIn(x402, new Headers({ Authorization: "Payment eyJ4IjoxfQ" }))).toBeUndefined();
  });

  it("MPP: an Authorization of the Payment scheme, also after another scheme; a buyer's own bearer is none", () => {
    expect(credentialIn(mpp, new Headers({ Authorization: "Payment eyJ4IjoxfQ" }))).toBe("Payment eyJ4IjoxfQ");
    expect(credentialIn(mpp, new Headers({ Authorization: "payment eyJ4IjoxfQ" }))).toBe("payment eyJ4IjoxfQ");
    expect(credentialIn(mpp, new Headers({ Authorization: "Bearer own, Payment eyJ4IjoxfQ" }))).toBe(
      "Bearer own, Payment eyJ4IjoxfQ",
    );
    expect(credentialIn(mpp, new Headers({ Authorization: "Bearer own-token" }))).toBeUndefined();
    expect(credentialIn(mpp, new Headers({ Authorization: "PaymentX eyJ4IjoxfQ" }))).toBeUndefined();
    expect(credentialIn(mpp, new Headers({ "Payment-Signature": "eyJ4IjoxfQ" }))).toBeUndefined();
  });
});
