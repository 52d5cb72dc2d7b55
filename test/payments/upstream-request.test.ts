import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { paymentRecordIds } from "../../src/core/ledger/ids.ts";
import { AUTH_METHODS, type AuthMethod } from "../../src/core/secrets/auth-config.ts";
import { readToken, signToken } from "../../src/gateway/signed-url.ts";
import {
  BodyFieldError,
  buyerResponseHeaders,
  forwardableHeaders,
  injectAuth,
  privateCacheControl,
  targetUrl,
  type UpstreamParts,
  withQuery,
} from "../../src/gateway/upstream/request.ts";

const parts = (overrides: Partial<UpstreamParts> = {}): UpstreamParts => ({
  url: new URL("https://up.example.com/v1/x?a=1"),
  headers: new Headers({ accept: "application/json", authorization: "Basic paywall" }),
  body: undefined,
  ...overrides,
});
const buyer = { authorization: "Bearer buyer-token", method: "POST" };

describe("auth injection, one row per authMethod", () => {
  const cases: Record<AuthMethod, { config: Record<string, string>; expect: (p: UpstreamParts) => void }> = {
    none: {
      config: {},
      expect: (p) => {
        expect(p.headers.get("authorization")).toBe("Basic paywall");
        expect(p.url.search).toBe("?a=1");
      },
    },
    bearer: { config: { bearerToken: "s1" }, expect: (p) => expect(p.headers.get("authorization")).toBe("Bearer s1") },
    token: { config: { token: "s2" }, expect: (p) => expect(p.headers.get("authorization")).toBe("Token s2") },
    "x-api-key": { config: { apiKey: "s3" }, expect: (p) => expect(p.headers.get("x-api-key")).toBe("s3") },
    "custom-header": {
      config: { headerName: "X-Vendor-Key", headerValue: "s4" },
      expect: (p) => expect(p.headers.get("x-vendor-key")).toBe("s4"),
    },
    "query-param": {
      config: { paramName: "a", paramValue: "s5" },
      expect: (p) => expect(p.url.searchParams.getAll("a")).toEqual(["s5"]),
    },
    "bearer-customer": {
      config: {},
      expect: (p) => expect(p.headers.get("authorization")).toBe("Bearer buyer-token"),
    },
    "x-api-key-secret": {
      config: { apiKey: "s6", apiSecret: "s7" },
      expect: (p) => {
        expect(p.headers.get("x-api-key")).toBe("s6");
        expect(p.headers.get("x-api-secret")).toBe("s7");
      },
    },
    "json-body-field": {
      config: { fieldName: "api_key", fieldValue: "s8" },
      expect: (p) => {
        expect(JSON.parse(p.body as string)).toEqual({ q: 1, api_key: "s8" });
        expect(p.headers.get("content-type")).toBe("application/json");
      },
    },
  };

  for (const method of AUTH_METHODS) {
    it(`${method}`, () => {
      const body = method === "json-body-field" ? JSON.stringify({ q: 1, api_key: "buyer-choice" }) : undefined;
      cases[method].expect(injectAuth(method, cases[method].config, parts({ body }), buyer));
    });
  }

  it("bearer-customer forwards nothing when the buyer sent no bearer", () => {
    const out = injectAuth("bearer-customer", {}, parts({ headers: new Headers() }), { authorization: "Basic x", method: "GET" });
    expect(out.headers.get("authorization")).toBeNull();
  });

  it("bearer-customer forwards the Bearer credential only, never an MPP Payment credential sent beside it", () => {
    const forwarded = (authorization: string) =>
      injectAuth("bearer-customer", {}, parts({ headers: new Headers() }), { authorization, method: "GET" }).headers.get(
        "authorization",
      );
    expect(forwarded('Bearer buyer-token, Payment id="c1", method="tempo", credential="0x76signed"')).toBe("Bearer buyer-token");
    expect(forwarded("bearer buyer-token")).toBe("Bearer buyer-token");
    expect(forwarded('Payment id="c1", Bearer buyer-token')).toBeNull();
    expect(forwarded("Bearer two words")).toBeNull();
  });

  it("query-param: the buyer's parameter of the credential's name, in any case, never reaches the upstream", () => {
    const name = "api_token";
    const spelled = fc
      .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
      .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));
    fc.assert(
      fc.property(fc.array(spelled, { minLength: 1, maxLength: 3 }), (names) => {
        const url = new URL("https://up.example.com/v1/x?q=1");
        for (const n of names) url.searchParams.append(n, "buyer-choice");
        const out = injectAuth("query-param", { paramName: name, paramValue: "secret" }, parts({ url }), buyer);
        const sent = [...out.url.searchParams].filter(([k]) => k.toLowerCase() === name);
        expect(sent, out.url.search).toEqual([[name, "secret"]]);
        expect(out.url.searchParams.get("q")).toBe("1");
      }),
    );
    const out = injectAuth(
      "query-param",
      { paramName: "api_token", paramValue: "s" },
      parts({ url: new URL("https://u.example/?API_TOKEN=b2") }),
      buyer,
    );
    expect(out.url.search).toBe("?api_token=s");
  });

  it("json-body-field: an empty body becomes the field alone; GET sends no body; a non-object body is refused", () => {
    const config = { fieldName: "k", fieldValue: "v" };
    expect(injectAuth("json-body-field", config, parts(), buyer).body).toBe('{"k":"v"}');
    expect(injectAuth("json-body-field", config, parts(), { ...buyer, method: "GET" }).body).toBeUndefined();
    for (const body of ["[1]", "not json", '"s"', "null"]) {
      expect(() => injectAuth("json-body-field", config, parts({ body }), buyer)).toThrow(BodyFieldError);
    }
  });
});

describe("target URL and query", () => {
  it("PROXY uses targetUrl; ROUTE joins the service's baseUrl and targetRoute", () => {
    const service = { baseUrl: "https://api.example.com/base/" };
    expect(targetUrl({ targetType: "PROXY", targetUrl: "https://t.example.com/p?x=1", targetRoute: null }, service).href).toBe(
      "https://t.example.com/p?x=1",
    );
    expect(targetUrl({ targetType: "ROUTE", targetUrl: null, targetRoute: "/v1/forecast" }, service).href).toBe(
      "https://api.example.com/base/v1/forecast",
    );
    expect(
      targetUrl({ targetType: "ROUTE", targetUrl: null, targetRoute: "/v1?day=1" }, { baseUrl: "https://a.example.com" }).href,
    ).toBe("https://a.example.com/v1?day=1");
  });

  it("adds the buyer's query, then the paywall's queryParams, which replace the buyer's value of a name", () => {
    const url = withQuery(new URL("https://t.example.com/p?fixed=1"), new URLSearchParams("city=Oslo&units=imperial"), [
      { key: "units", value: "metric" },
    ]);
    expect(url.search).toBe("?fixed=1&city=Oslo&units=metric");
  });

  it("a buyer's parameter replaces the targetUrl's fixed parameter of that name, never goes beside it", () => {
    const target = new URL("https://t.example.com/p?units=metric&key=pub&keep=1");
    expect(withQuery(target, new URLSearchParams("units=imperial"), []).search).toBe("?key=pub&keep=1&units=imperial");
    // Every value the buyer sent for the name, and none of the fixed ones.
    expect(withQuery(target, new URLSearchParams("units=a&units=b"), []).searchParams.getAll("units")).toEqual(["a", "b"]);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("units", "key", "keep", "x"), fc.string({ maxLength: 4 })), { maxLength: 5 }),
        (buyerPairs) => {
          const out = withQuery(target, new URLSearchParams(buyerPairs), []);
          for (const name of ["units", "key", "keep", "x"]) {
            const mine = buyerPairs.filter(([k]) => k === name).map(([, v]) => v);
            const expected = mine.length > 0 ? mine : target.searchParams.getAll(name);
            expect(out.searchParams.getAll(name), `${name} of ${out.search}`).toEqual(expected);
          }
        },
      ),
    );
  });
});

describe("buyer headers: the paywall's allowedHeaders, Accept and Content-Type, never a stripped one", () => {
  const buyerHeaders = () =>
    new Headers({
      authorization: "Bearer b",
      "x-api-key": "k",
      cookie: "c=1",
      "payment-signature": "p",
      "x-payment": "p1",
      host: "pay.example.com",
      connection: "keep-alive",
      "cf-connecting-ip": "1.2.3.4",
      "x-forwarded-for": "1.2.3.4",
      "proxy-authorization": "Basic x",
      accept: "application/json",
      "content-type": "text/plain",
      "x-buyer-trace": "t1",
      "x-other": "o",
    });

  it("with no allowedHeaders, only Accept and Content-Type", () => {
    expect([...forwardableHeaders(buyerHeaders(), []).keys()].sort()).toEqual(["accept", "content-type"]);
  });

  it("listed names are forwarded case-insensitively; stripped ones never, even when listed", () => {
    const out = forwardableHeaders(buyerHeaders(), [
      "X-Buyer-Trace",
      "Authorization",
      "Cookie",
      "X-API-Key",
      "Payment-Signature",
      "CF-Connecting-IP",
      "X-Forwarded-For",
      "Host",
    ]);
    expect([...out.keys()].sort()).toEqual(["accept", "content-type", "x-buyer-trace"]);
    expect(out.get("x-buyer-trace")).toBe("t1");
  });
});

describe("the upstream's response headers a buyer gets: an allowlist", () => {
  const KEPT = {
    "content-type": "text/csv; charset=utf-8",
    "content-language": "nb",
    "content-disposition": 'attachment; filename="data.csv"',
    "content-range": "bytes 0-9/100",
    "accept-ranges": "bytes",
    etag: '"abc"',
    "last-modified": "Wed, 21 Oct 2026 07:28:00 GMT",
    expires: "Wed, 21 Oct 2026 07:28:00 GMT",
    vary: "Accept",
    location: "https://cdn.example.com/file",
    "retry-after": "30",
    ratelimit: "limit=100, remaining=50, reset=30",
    "ratelimit-policy": "100;w=60",
    "ratelimit-limit": "100",
    "ratelimit-remaining": "50",
    "ratelimit-reset": "30",
    "x-ratelimit-limit": "100",
    "x-ratelimit-remaining": "50",
    "x-rate-limit-reset": "1700000000",
  };
  const DROPPED = {
    "set-cookie": "session=upstream; Path=/",
    "content-security-policy": "default-src *",
    "content-security-policy-report-only": "default-src *",
    "x-frame-options": "ALLOWALL",
    "x-content-type-options": "sniff",
    "strict-transport-security": "max-age=0",
    "access-control-allow-origin": "*",
    "access-control-allow-credentials": "true",
    "cross-origin-resource-policy": "cross-origin",
    "cross-origin-opener-policy": "unsafe-none",
    "permissions-policy": "camera=*",
    "referrer-policy": "unsafe-url",
    "clear-site-data": '"*"',
    refresh: "0;url=https://evil.example/",
    link: "<https://evil.example/x.js>; rel=preload",
    "www-authenticate": 'Payment id="x", method="tempo"',
    "payment-required": "eyJ4NDAy",
    "payment-response": "eyJ4NDAy",
    "payment-receipt": "eyJ4NDAy",
    "x-payment-response": "eyJ4NDAy",
    connection: "close",
    "keep-alive": "timeout=5",
    "transfer-encoding": "chunked",
    "content-length": "10",
    "content-encoding": "gzip",
    trailer: "x",
    upgrade: "h2c",
    "proxy-authenticate": "Basic",
    server: "Apache/2.2.3",
    "x-powered-by": "PHP/5.2",
    via: "1.1 internal-proxy",
    "alt-svc": 'h3=":443"',
    "server-timing": "db;dur=53",
    "x-request-id": "upstream-id",
    "x-upstream-secret": "upstream-only",
  };

  it("keeps what describes, caches and paces the answer, and drops everything else", () => {
    const out = buyerResponseHeaders(new Headers({ ...KEPT, ...DROPPED, "cache-control": "max-age=60" }));
    for (const [name, value] of Object.entries(KEPT)) expect(out.get(name), name).toBe(value);
    for (const name of Object.keys(DROPPED)) expect(out.get(name), name).toBeNull();
    expect([...out.keys()].sort()).toEqual([...Object.keys(KEPT), "cache-control"].sort());
  });

  it("drops any name off the list, whatever its case (generated names)", () => {
    const kept = new Set([...Object.keys(KEPT), "cache-control"]);
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), (name) => {
        const out = buyerResponseHeaders(new Headers({ [name.toUpperCase()]: "v" }));
        const isRateLimit = /^(x-)?rate-?limit(-[a-z0-9-]+)?$/.test(name);
        expect(out.has(name), name).toBe(kept.has(name) || isRateLimit || name === "cache-control");
      }),
      { numRuns: 2000 },
    );
  });

  it("a paid answer is private to its payer: Cache-Control never lets a shared cache keep it", () => {
    expect(privateCacheControl(null)).toBe("private");
    expect(privateCacheControl("public, max-age=3600, s-maxage=86400")).toBe("private, max-age=3600");
    expect(privateCacheControl("max-age=60, proxy-revalidate")).toBe("private, max-age=60");
    expect(privateCacheControl('private="set-cookie", max-age=5')).toBe("private, max-age=5");
    expect(privateCacheControl("no-store")).toBe("no-store");
    expect(privateCacheControl("Public, No-Cache")).toBe("private, No-Cache");
    expect(buyerResponseHeaders(new Headers()).get("cache-control")).toBe("private");
  });
});

describe("payment ids", () => {
  it("are a function of protocol, network, payer and nonce, regardless of hex case", async () => {
    const nonce = `0x${"ab".repeat(32)}`;
    const payer = `0x${"Cd".repeat(20)}`;
    const a = await paymentRecordIds("x402", "base-sepolia", payer, nonce);
    expect(a.transactionId).toMatch(/^txn_x402_[0-9a-f]{40}$/);
    expect(await paymentRecordIds("x402", "base-sepolia", payer.toLowerCase(), nonce.toUpperCase().replace("0X", "0x"))).toEqual(
      a,
    );
    const others = await Promise.all([
      paymentRecordIds("x402", "base", payer, nonce),
      paymentRecordIds("x402", "base-sepolia", `0x${"ee".repeat(20)}`, nonce),
      paymentRecordIds("x402", "base-sepolia", payer, `0x${"ac".repeat(32)}`),
      paymentRecordIds("mpp", "base-sepolia", payer, nonce),
    ]);
    expect(new Set([a, ...others].map((i) => i.transactionId)).size).toBe(5);
  });
});

describe("signed URL tokens", () => {
  it("verify only with the same secret and untampered id and expiry", async () => {
    const at = new Date(1_800_000_000_000);
    const token = await signToken("secret-1", "su_abc", at);
    expect(await readToken("secret-1", token)).toEqual({ id: "su_abc", expiresAt: at });
    expect(await readToken("secret-2", token)).toBeUndefined();
    expect(await readToken("secret-1", token.replace("su_abc", "su_abd"))).toBeUndefined();
    expect(await readToken("secret-1", token.replace(".1800000000000.", ".1900000000000."))).toBeUndefined();
    expect(await readToken("secret-1", "garbage")).toBeUndefined();
  });

  it("have one spelling: the signature's unused trailing bits set is another token, refused", async () => {
    const token = await signToken("secret-1", "su_abc", new Date(1_800_000_000_000));
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // 32 bytes are 43 base64url characters: the last one carries 4 bits of the signature and 2 unused ones.
    const last = alphabet.indexOf(token.at(-1)!);
    const respelled = token.slice(0, -1) + alphabet[last ^ 1];
    expect(await readToken("secret-1", respelled)).toBeUndefined();
  });
});
