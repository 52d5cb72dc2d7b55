// What a buyer's browser meets on the payment origin, on real payment answers: every answer (402 of both standards,
// 405, the paid 200, an upstream's error, a SIGNED_URL fulfilment) carries the payment origin's headers, and none of
// the headers an upstream sends against a page's origin reaches the buyer; the upstream's page itself is passed on as
// it came (it only cannot run). And an upstream that cannot be reached is the gateway's 502, never a page.
import { describe, expect, it } from "vitest";
import { paymentResponseOf } from "../../src/cli/localnet/buyer.ts";
import { createMppBuyer } from "../../src/cli/localnet/mpp-buyer.ts";
import { UPSTREAM_HOSTILE_HEADERS } from "../../src/cli/localnet/upstream.ts";
import { PAYMENT_ORIGIN_HEADERS } from "../../src/gateway/origin-headers.ts";
import { balanceOf, buyer, gatewayFetch, history, openShop, upstreamRequests } from "./support.ts";
import { mppShop, TEMPO_RPC, tempo } from "./tempo-support.ts";

/** The payment origin's own headers, present and exactly as set; no cookie. */
function expectPaymentHeaders(res: Response, what: string) {
  for (const [name, value] of Object.entries(PAYMENT_ORIGIN_HEADERS))
    expect(res.headers.get(name), `${what}: ${name}`).toBe(value);
  expect(res.headers.get("content-security-policy"), what).toMatch(/^sandbox;/);
  expect(res.headers.getSetCookie(), `${what}: Set-Cookie`).toEqual([]);
}

/** None of the upstream's hostile headers, by name (the payment origin's own CSP and CORP are checked above). */
function expectNoUpstreamHeaders(res: Response, what: string) {
  for (const [name, value] of Object.entries(UPSTREAM_HOSTILE_HEADERS)) {
    const got = res.headers.get(name);
    if (got !== null) expect(got, `${what}: ${name} is the upstream's`).not.toBe(value);
  }
  for (const name of ["x-frame-options", "access-control-allow-origin", "keep-alive", "x-powered-by", "refresh"]) {
    expect(res.headers.get(name), `${what}: ${name}`).toBeNull();
  }
  expect(res.headers.get("x-upstream-secret"), what).toBeNull();
}

describe("the payment origin's headers on real payment answers", () => {
  it("x402: the 402 challenge and a 405 carry them", async () => {
    const shop = await openShop({ route: "/html", paywall: { allowedMethods: ["GET"] } });
    const challenge = await gatewayFetch(shop.x402);
    expect(challenge.status).toBe(402);
    expectPaymentHeaders(challenge, "402 x402");
    expect(challenge.headers.get("payment-required")).toBeTruthy();
    const notAllowed = await gatewayFetch(shop.x402, { method: "DELETE" });
    expect(notAllowed.status).toBe(405);
    expectPaymentHeaders(notAllowed, "405");
    expect(await notAllowed.json()).toMatchObject({ code: "METHOD_NOT_ALLOWED" });
  });

  it("x402: a paid text/html answer comes as sent, sandboxed, with none of the upstream's headers", async () => {
    const shop = await openShop({ route: "/html", price: "321" });
    const js = 'fetch("/steal", { credentials: "include" })';
    const res = await buyer().fetch(`${shop.x402}?js=${encodeURIComponent(js)}`);
    expect(res.status).toBe(200);
    expect(paymentResponseOf(res)).toMatchObject({ success: true });
    expect(await balanceOf(shop.merchant)).toBe(321n);
    expectPaymentHeaders(res, "paid 200");
    expectNoUpstreamHeaders(res, "paid 200");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("private");
    const html = await res.text();
    expect(html).toContain(`<script>${js}</script>`);
    // The upstream did send them: the gateway removed them.
    expect((await upstreamRequests(shop.prefix)).map((r) => r.path)).toEqual([`${shop.prefix}/html`]);
  });

  it("x402: an upstream's error answer (4xx, passed through uncharged) carries them too", async () => {
    const shop = await openShop({ route: "/status/418" });
    const res = await buyer().fetch(shop.x402);
    expect(res.status).toBe(418);
    expectPaymentHeaders(res, "upstream 418");
    expect(res.headers.get("x-upstream-secret")).toBeNull();
    expect((await history(shop)).transactions).toMatchObject([{ status: "FAILED" }]);
  });

  it("MPP: the 402 challenge and the paid text/html answer carry them, with the gateway's challenge only", async () => {
    const shop = await mppShop({ route: "/html", price: "250" });
    const challenge = await gatewayFetch(shop.mpp);
    expect(challenge.status).toBe(402);
    expectPaymentHeaders(challenge, "402 MPP");
    expect(challenge.headers.get("www-authenticate")).toMatch(/^Payment /);
    const account = tempo.buyers[0];
    if (!account) throw new Error("no funded Tempo buyer");
    const mpp = createMppBuyer({
      privateKey: account.privateKey,
      rpcUrl: TEMPO_RPC,
      chainId: tempo.chainId,
      fetch: gatewayFetch,
    });
    const res = await mpp.fetch(shop.mpp);
    expect(res.status).toBe(200);
    expect(res.headers.get("payment-receipt")).toBeTruthy();
    expectPaymentHeaders(res, "paid 200 MPP");
    expectNoUpstreamHeaders(res, "paid 200 MPP");
    // The upstream's own `WWW-Authenticate: Payment …` would ask the buyer to pay again, elsewhere.
    expect(res.headers.get("www-authenticate")).toBeNull();
    expect(await res.text()).toContain("<script>");
  }, 60_000);

  it("SIGNED_URL: the settlement's answer and the fulfilment's page carry them", async () => {
    const shop = await openShop({ route: "/html", price: "99", paywall: { fulfillmentMode: "SIGNED_URL" } });
    const paid = await buyer().fetch(shop.x402);
    expect(paid.status).toBe(200);
    expectPaymentHeaders(paid, "SIGNED_URL 200");
    const { data } = (await paid.json()) as { data: { url: string } };
    const page = await gatewayFetch(data.url);
    expect(page.status).toBe(200);
    expectPaymentHeaders(page, "signed URL page");
    expectNoUpstreamHeaders(page, "signed URL page");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });
});

describe("an upstream that cannot be reached", () => {
  it("is a failed fetch in the Worker: 502 BAD_GATEWAY in the envelope, nothing charged, the payment FAILED", async () => {
    const shop = await openShop({
      price: "555",
      paywall: { targetType: "PROXY", targetUrl: "https://unreachable.gateway.test/x", targetRoute: undefined },
    });
    const res = await buyer().fetch(shop.x402);
    expect(res.status, await res.clone().text()).toBe(502);
    expectPaymentHeaders(res, "502");
    const body = (await res.json()) as { code: string; error: string };
    expect(body).toMatchObject({ code: "BAD_GATEWAY", error: expect.stringMatching(/could not be reached/) });
    expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+|Error:/);
    expect(await balanceOf(shop.merchant)).toBe(0n);
    const { transactions, events } = await history(shop);
    expect(transactions).toMatchObject([{ status: "FAILED", failureReason: "upstream unreachable" }]);
    expect(events.find((e) => e.eventType === "ERROR")).toMatchObject({ statusCode: 502 });
  });
});
