import { describe, expect, it } from "vitest";
import { paymentUrls } from "../../src/core/payments.ts";

const BASE = "https://pay.example.com";

describe("paymentUrls", () => {
  it("without a service: both null, whatever the networks", () => {
    expect(paymentUrls(BASE, null, "forecast", ["tempo"])).toEqual({ x402: null, mpp: null });
    expect(paymentUrls(BASE, null, "forecast", ["base-sepolia"])).toEqual({ x402: null, mpp: null });
  });

  it("with a service: x402 always; mpp only with tempo or tempo-testnet", () => {
    expect(paymentUrls(BASE, "svc_1", "forecast", ["base-sepolia"])).toEqual({
      x402: "https://pay.example.com/api/x402/pay/svc_1/forecast",
      mpp: null,
    });
    expect(paymentUrls(BASE, "svc_1", "forecast", ["base-sepolia", "tempo-testnet"])).toEqual({
      x402: "https://pay.example.com/api/x402/pay/svc_1/forecast",
      mpp: "https://pay.example.com/api/mpp/pay/svc_1/forecast",
    });
    expect(paymentUrls(BASE, "svc_1", "forecast", ["tempo"])).toEqual({
      x402: "https://pay.example.com/api/x402/pay/svc_1/forecast",
      mpp: "https://pay.example.com/api/mpp/pay/svc_1/forecast",
    });
    expect(paymentUrls(BASE, "svc_1", "forecast", ["base", "hyperevm"]).mpp).toBeNull();
  });

  it("keeps slugs with dots, dashes and underscores as they are", () => {
    expect(paymentUrls(BASE, "svc_1", "a.b_c-d", ["tempo"]).x402).toBe("https://pay.example.com/api/x402/pay/svc_1/a.b_c-d");
  });

  it("encodes path segments, so an id or slug cannot add segments", () => {
    const urls = paymentUrls(BASE, "svc/../x", "a/b?c#d", ["tempo"]);
    expect(urls.x402).toBe("https://pay.example.com/api/x402/pay/svc%2F..%2Fx/a%2Fb%3Fc%23d");
    expect(new URL(urls.x402 as string).pathname.split("/")).toHaveLength(6);
  });

  it("uses the base as given (a base with a path prefix works)", () => {
    expect(paymentUrls("https://example.com/pay", "svc_1", "s", ["base"]).x402).toBe(
      "https://example.com/pay/api/x402/pay/svc_1/s",
    );
  });
});
