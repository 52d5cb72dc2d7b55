// The two origins of one Worker, over HTTP through its real fetch handler: the payment origin (the host of
// PAYMENT_BASE_URL, `pay.example.com` here) answers the buyer-facing payment paths and nothing else; every other host
// is the API origin and never answers a payment path. A path on the wrong origin is a 404 in the error envelope, and
// every answer of the payment origin carries its headers (a sandboxing CSP, nosniff, CORP, no cookie).
import fc from "fast-check";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { PAYMENT_ORIGIN_HEADERS, paymentOriginHeaders } from "../../src/gateway/origin-headers.ts";
import { api, read, send } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";

const PAY = "https://pay.example.com";
const API = "https://api.test";
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

async function call(origin: string, method: string, path: string, headers: Record<string, string> = {}) {
  const body = method === "GET" || method === "HEAD" ? undefined : "{}";
  return read(await send(new Request(`${origin}${path}`, { method, headers, body })));
}

function expectNotFoundEnvelope(res: { status: number; body: unknown; text: string }, method: string, what: string) {
  expect(res.status, what).toBe(404);
  if (method === "HEAD") expect(res.text, what).toBe("");
  else expect(res.body, what).toMatchObject({ code: "NOT_FOUND", meta: { requestId: expect.stringMatching(/^req_/) } });
}

function expectPaymentHeaders(headers: Headers, what: string) {
  for (const [name, value] of Object.entries(PAYMENT_ORIGIN_HEADERS)) expect(headers.get(name), `${what}: ${name}`).toBe(value);
  // Spelled out, not only as the module's constant: the sandbox and the bans are the guarantee.
  expect(headers.get("content-security-policy"), what).toMatch(/^sandbox; default-src 'none'(;|$)/);
  expect(headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(headers.get("cross-origin-resource-policy"), what).toMatch(/^(same-origin|same-site|cross-origin)$/);
  expect(headers.getSetCookie(), what).toEqual([]);
}

/** Every documented operation's path, with its parameters filled in. */
async function documentedPaths(): Promise<string[]> {
  const doc = (await api("/openapi.json")).body as { paths: Record<string, unknown> };
  return Object.keys(doc.paths).map((p) => p.replace(/\{[^}]+\}/g, "x_1"));
}

const DASHBOARD_PAGES = [
  "/dashboard",
  "/dashboard/",
  "/dashboard/sign-in",
  "/dashboard/sign-in/link?token=00",
  "/dashboard/sign-in/siwe",
  "/dashboard/sign-in/siwe/message",
  "/dashboard/sign-up",
  "/dashboard/sign-out",
  "/dashboard/keys",
  "/dashboard/keys/key_1/edit",
  "/dashboard/activity",
  "/dashboard/services",
  "/dashboard/earnings",
  "/dashboard/profile",
  "/dashboard/profile/wallet",
  "/dashboard/assets/siwe.js",
  "/dashboard/assets/dashboard.css",
];
// `/openapi.json` is the payment origin's own discovery catalogue there (test/discovery/api.test.ts), not the API's.
const STATIC = ["/docs", "/docs.css", "/docs.js", "/docs.html", "/_headers"];

const isGatewayPath = (pathname: string) =>
  /^\/api\/(x402\/pay|mpp\/pay)\/[^/]+\/[^/]+$|^\/api\/signed\/[^/]+$/.test(pathname) ||
  /^\/(openapi\.json|llms\.txt|favicon\.ico)$|^\/api\/discovery\/[^/]+\/(openapi\.json|llms\.txt)$/.test(pathname) ||
  /^\/api\/(public|siwx)\/[^/]+\/./.test(pathname);

describe("the payment origin answers nothing but the payment paths", () => {
  it("every documented API operation, under every method: 404 envelope with the payment origin's headers", async () => {
    const paths = await documentedPaths();
    expect(paths.length).toBeGreaterThanOrEqual(10);
    const { key } = await createApiKey();
    for (const path of paths) {
      for (const method of METHODS) {
        const res = await call(PAY, method, path, { authorization: `Bearer ${key}` });
        expectNotFoundEnvelope(res, method, `${method} ${PAY}${path}`);
        expectPaymentHeaders(res.headers, `${method} ${path}`);
      }
    }
  });

  it("the dashboard's pages and assets, the API reference and the document: 404 with the payment headers", async () => {
    for (const path of [...DASHBOARD_PAGES, ...STATIC]) {
      for (const method of METHODS) {
        const res = await call(PAY, method, path);
        expectNotFoundEnvelope(res, method, `${method} ${PAY}${path}`);
        expectPaymentHeaders(res.headers, `${method} ${path}`);
        expect(res.headers.get("content-type") ?? "", path).not.toMatch(/html|javascript|css/);
      }
    }
  });

  it("any other path, generated, under any method: 404 envelope with the payment headers, never a page", async () => {
    const segment = fc.oneof(
      fc.constantFrom("api", "x402", "mpp", "pay", "signed", "v1", "dashboard", "docs", "..", "%2e%2e", "openapi.json", ""),
      fc.stringMatching(/^[a-zA-Z0-9._~-]{1,8}$/),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { maxLength: 5 }), fc.constantFrom(...METHODS), async (segments, method) => {
        const path = `/${segments.join("/")}`;
        // The gateway's own path shapes (payment URLs, signed URLs, discovery files, free and sign-in routes) are
        // answered by it: not "any other".
        if (isGatewayPath(new URL(`${PAY}${path}`).pathname)) return;
        const res = await call(PAY, method, path);
        expectNotFoundEnvelope(res, method, `${method} ${path}`);
        expectPaymentHeaders(res.headers, `${method} ${path}`);
      }),
      { numRuns: 150 },
    );
  });

  it("the payment paths themselves answer there, with the payment headers (unknown paywall: the gateway's 404)", async () => {
    for (const path of ["/api/x402/pay/svc_1/s", "/api/mpp/pay/svc_1/s", "/api/signed/not-a-token"]) {
      const res = await call(PAY, "GET", path);
      expect(res.status, path).toBe(404);
      expect(res.body.error, path).toMatch(/paywall|link/i);
      expectPaymentHeaders(res.headers, path);
    }
  });
});

describe("the API origin never answers a payment path", () => {
  it("every payment path shape, under every method: 404 envelope, without the gateway behind it", async () => {
    const id = fc.stringMatching(/^[a-zA-Z0-9._~-]{1,12}$/);
    const shape = fc.oneof(
      fc.tuple(fc.constantFrom("x402", "mpp"), id, id).map(([p, svc, slug]) => `/api/${p}/pay/${svc}/${slug}`),
      id.map((token) => `/api/signed/${token}`),
      fc.constantFrom("/api/x402/pay", "/api/mpp/pay/x", "/api/signed", "/api/", "/api/x402/pay/svc_1/s/extra"),
    );
    await fc.assert(
      fc.asyncProperty(shape, fc.constantFrom(...METHODS), async (path, method) => {
        const res = await call(API, method, path, { "payment-signature": "eyJ4IjoxfQ", authorization: "Payment x" });
        // A preflight is the CORS policy's answer on the API origin, never the gateway's.
        if (method === "OPTIONS") expect(res.status, path).not.toBe(402);
        else expectNotFoundEnvelope(res, method, `${method} ${API}${path}`);
        expect(res.headers.get("payment-required"), path).toBeNull();
        expect(res.headers.get("www-authenticate") ?? "", path).not.toMatch(/^Payment/);
      }),
      { numRuns: 150 },
    );
  });

  it("a live paywall's payment URLs: 402 on the payment origin, 404 'No such endpoint' on the API origin", async () => {
    const { key } = await createApiKey();
    const service = await api("/v1/services", {
      key,
      method: "POST",
      body: {
        name: "Origins",
        baseUrl: "https://api.example.com",
        authMethod: "none",
        authConfig: {},
        networks: ["base-sepolia", "tempo-testnet"],
        mode: "testnet",
      },
    });
    const paywall = await api("/v1/paywalls", {
      key,
      method: "POST",
      body: {
        slug: "origins",
        name: "Origins",
        targetType: "ROUTE",
        targetRoute: "/x",
        serviceId: service.body.data.id,
        price: "100",
        currency: "USDC",
        networks: ["base-sepolia", "tempo-testnet"],
        fulfillmentMode: "PROXY",
      },
    });
    expect(paywall.status, paywall.text).toBe(201);
    for (const url of Object.values(paywall.body.data.paymentUrls as Record<string, string>)) {
      const { pathname } = new URL(url);
      expect(new URL(url).origin).toBe(PAY);
      const paid = await call(PAY, "GET", pathname);
      expect(paid.status, url).toBe(402);
      expectPaymentHeaders(paid.headers, url);
      for (const method of METHODS.filter((m) => m !== "OPTIONS")) {
        const res = await call(API, method, pathname);
        expectNotFoundEnvelope(res, method, `${method} ${API}${pathname}`);
        if (method !== "HEAD") expect(res.body.error, pathname).toBe("No such endpoint");
      }
    }
  }, 60_000); // the first 402 loads the payment SDKs

  it("a disabled paywall's payment URLs: 404 saying it is disabled, not that it does not exist", async () => {
    const { key } = await createApiKey();
    const service = await api("/v1/services", {
      key,
      method: "POST",
      body: {
        name: "Disabled",
        baseUrl: "https://api.example.com",
        authMethod: "none",
        authConfig: {},
        networks: ["base-sepolia", "tempo-testnet"],
        mode: "testnet",
      },
    });
    const paywall = await api("/v1/paywalls", {
      key,
      method: "POST",
      body: {
        slug: "off",
        name: "Off",
        targetType: "ROUTE",
        targetRoute: "/x",
        serviceId: service.body.data.id,
        price: "100",
        currency: "USDC",
        networks: ["base-sepolia", "tempo-testnet"],
        fulfillmentMode: "PROXY",
        enabled: false,
      },
    });
    expect(paywall.status, paywall.text).toBe(201);
    for (const url of Object.values(paywall.body.data.paymentUrls as Record<string, string>)) {
      const res = await call(PAY, "GET", new URL(url).pathname);
      expectNotFoundEnvelope(res, "GET", url);
      expect(res.body.error, url).toMatch(/^This paywall is disabled/);
      expect(res.body.details, url).toBeUndefined();
    }
    const unknown = await call(PAY, "GET", `/api/x402/pay/${service.body.data.id}/nope`);
    expect(unknown.body.error).toBe("No such paywall");
  });

  it("localhost and another host name are the API origin too", async () => {
    for (const origin of ["http://localhost:8787", "https://pay.example.com.evil.test", "https://api.pay.example.com"]) {
      const res = await call(origin, "GET", "/api/x402/pay/svc_1/s");
      expectNotFoundEnvelope(res, "GET", origin);
      expect(res.headers.get("content-security-policy") ?? "", origin).not.toMatch(/^sandbox/);
    }
  });
});

describe("the API origin's front door, GET /", () => {
  it("a browser gets a page pointing at the dashboard and the API reference", async () => {
    const res = await call(API, "GET", "/", { accept: "text/html,application/xhtml+xml,*/*;q=0.8" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.text).toContain('href="/dashboard"');
    expect(res.text).toContain('href="/docs"');
  });

  it("an API client (JSON or no Accept) gets the same links in the success envelope", async () => {
    for (const headers of [{}, { accept: "application/json" }, { accept: "*/*" }] as Record<string, string>[]) {
      const res = await call(API, "GET", "/", headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.body, JSON.stringify(headers)).toMatchObject({
        data: { dashboard: "/dashboard", docs: "/docs", openapi: "/openapi.json" },
        meta: { requestId: expect.stringMatching(/^req_/) },
      });
    }
  });

  it("the payment origin's / stays a 404", async () => {
    expectNotFoundEnvelope(await call(PAY, "GET", "/", { accept: "text/html" }), "GET", "payment origin /");
  });
});

describe("the payment origin's headers over any answer a handler gives", () => {
  /** A response whose headers refuse every change, as a `fetch` or Cache API response's do. */
  function immutable(res: Response): Response {
    const locked = new Proxy(res.headers, {
      get(target, name) {
        if (name === "set" || name === "append" || name === "delete") {
          return () => {
            throw new TypeError("Can't modify immutable headers.");
          };
        }
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    Object.defineProperty(res, "headers", { value: locked });
    return res;
  }

  it.each([
    ["mutable", (r: Response) => r],
    ["immutable", immutable],
  ])("%s headers: its cookies and security headers are replaced, its body and status kept", async (_, wrap) => {
    const app = new Hono();
    app.use("*", paymentOriginHeaders());
    app.get("/", () =>
      wrap(
        new Response("<script>steal()</script>", {
          status: 203,
          headers: {
            "content-type": "text/html",
            "set-cookie": "session=stolen; Path=/",
            "content-security-policy": "script-src *",
            "cross-origin-resource-policy": "cross-origin",
          },
        }),
      ),
    );
    const res = await app.request("/");
    expect(res.status).toBe(203);
    expect(await res.text()).toBe("<script>steal()</script>");
    expect(res.headers.get("content-type")).toBe("text/html");
    expect(res.headers.getSetCookie()).toEqual([]);
    expectPaymentHeaders(res.headers, "handler's answer");
  });
});
