// What a tenant sends that will become a URL, a path, a header or a name upstream, over HTTP: refused with a
// 400 naming the field, or stored exactly as it was checked.
import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/client.ts";
import {
  type Actor,
  actor,
  createPaywall,
  createService,
  expectError,
  expectInvalid,
  proxyPaywallBody,
  routePaywallBody,
  serviceBody,
  storedPaywall,
  storedService,
} from "../support/resources.ts";

let who: Actor;
beforeAll(async () => {
  who = await actor();
});

const postService = (body: Record<string, unknown>) =>
  api("/v1/services", { key: who.key, method: "POST", body: serviceBody(body) });
const patchService = (id: string, body: Record<string, unknown>) =>
  api(`/v1/services/${id}`, { key: who.key, method: "PATCH", body });
const postPaywall = (body: Record<string, unknown>) => api("/v1/paywalls", { key: who.key, method: "POST", body });
const patchPaywall = (id: string, body: Record<string, unknown>) =>
  api(`/v1/paywalls/${id}`, { key: who.key, method: "PATCH", body });

/** URL text other parsers would read differently: refused before any SSRF verdict. */
const BAD_URL_TEXT = [
  "http://example.com\\@127.0.0.1/",
  "https://api.example.com/v1\r\nX-Injected: 1",
  "https://api.example.com/\u0000",
  "https://api.example.com/a\tb",
  " https://api.example.com/",
  "https://api.example.com/a b",
  "https://api.example.com/\u00a0",
];

const URL_FIELDS = ["baseUrl", "docsHomepage", "docsApiReference", "docsLlms"] as const;

describe("service URLs: baseUrl and docs*", () => {
  it.each(URL_FIELDS.flatMap((field) => BAD_URL_TEXT.map((url) => [field, url] as const)))(
    "create with %s %j → 400 VALIDATION_ERROR naming the field",
    async (field, url) => {
      expectInvalid(await postService({ [field]: url }), field, /whitespace, control characters or a backslash/);
    },
  );

  it.each(URL_FIELDS)("update of %s with a backslash or CR/LF → 400, nothing changed", async (field) => {
    const svc = await createService(who);
    for (const url of BAD_URL_TEXT.slice(0, 2)) {
      expectInvalid(await patchService(svc.id, { [field]: url, name: "changed" }), field);
    }
    expect(await storedService(svc.id)).toMatchObject({ name: svc.name, baseUrl: svc.baseUrl, [field]: svc[field] });
  });

  it.each(URL_FIELDS)("%s is stored and returned as the normalized URL that was checked", async (field) => {
    const sent = "HTTPS://API.Example.COM:443/a/./b/../c?q=1#top";
    const svc = await createService(who, { [field]: sent });
    expect(svc[field]).toBe("https://api.example.com/a/c?q=1#top");
    expect((await storedService(svc.id))?.[field]).toBe("https://api.example.com/a/c?q=1#top");
    const res = await patchService(svc.id, { [field]: "https://xn--mnchen-3ya.example/%7e" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data[field]).toBe("https://xn--mnchen-3ya.example/%7e");
  });

  it.each(["docsHomepage", "docsApiReference", "docsLlms"] as const)(
    "%s follows the public-address rule: javascript:, data:, private hosts → 400 SSRF_BLOCKED",
    async (field) => {
      for (const [url, reason] of [
        ["javascript:alert(1)", "scheme_not_allowed"],
        ["data:text/html,hi", "scheme_not_allowed"],
        ["http://[::ffff:0:7f00:1]/", "private_address"],
        ["http://169.254.169.254/", "private_address"],
        ["http://localhost/docs", "blocked_hostname"],
      ] as const) {
        const res = await postService({ [field]: url });
        expectError(res, 400, "SSRF_BLOCKED");
        expect(res.body.details).toEqual([{ path: field, message: res.body.error, reason }]);
      }
      const svc = await createService(who);
      const res = await patchService(svc.id, { [field]: "javascript:alert(1)" });
      expectError(res, 400, "SSRF_BLOCKED");
      expect(res.body.details).toEqual([{ path: field, message: res.body.error, reason: "scheme_not_allowed" }]);
      expect(await patchService(svc.id, { [field]: null })).toMatchObject({ status: 200 });
    },
  );

  it("the IPv4-translated and other special IPv6 blocks are refused as baseUrl", async () => {
    for (const url of [
      "http://[::ffff:0:7f00:1]/",
      "http://[100:0:0:1::1]/",
      "http://[2620:4f:8000::53]/",
      "http://[4000::1]/",
    ]) {
      const res = await postService({ baseUrl: url });
      expectError(res, 400, "SSRF_BLOCKED");
      expect(res.body.details).toEqual([{ path: "baseUrl", message: res.body.error, reason: "private_address" }]);
    }
  });
});

describe("upstream URLs with an empty user name or port 0", () => {
  it.each([
    ["http://@api.example.com/", "userinfo_not_allowed"],
    ["https://:@api.example.com/v1", "userinfo_not_allowed"],
    ["http:@api.example.com/", "userinfo_not_allowed"],
    ["https://api.example.com:0/", "port_not_allowed"],
    ["http://93.184.216.34:00/x", "port_not_allowed"],
  ])("%s → 400 SSRF_BLOCKED (%s) as baseUrl and as targetUrl, nothing stored", async (url, reason) => {
    const svc = await postService({ baseUrl: url });
    expectError(svc, 400, "SSRF_BLOCKED");
    expect(svc.body.details).toEqual([{ path: "baseUrl", message: svc.body.error, reason }]);
    const pw = await postPaywall(proxyPaywallBody({ targetUrl: url }));
    expectError(pw, 400, "SSRF_BLOCKED");
    expect(pw.body.details).toEqual([{ path: "targetUrl", message: pw.body.error, reason }]);
  });
});

const BAD_ROUTES = [
  "/..%2f..%2fx",
  "/%2e%2e%2f/x",
  "/a%5c..%5cadmin",
  "/\\127.0.0.1/x",
  "//169.254.169.254/latest/meta-data/",
  "/a/../admin",
  "/a/%2e%2e/admin",
  "/a/./b",
  "/a\r\nHost: evil",
  "/a\u0000",
  "/a b",
  "/a?x=1",
  "v1/forecast",
];

describe("routes: targetRoute, publicRoutes, siwxRoutes", () => {
  it.each(BAD_ROUTES)("service publicRoutes and siwxRoutes refuse %j on create and update", async (route) => {
    expectInvalid(await postService({ publicRoutes: ["/ok", route] }), "publicRoutes.1");
    expectInvalid(await postService({ siwxRoutes: [route] }), "siwxRoutes.0");
    const svc = await createService(who);
    expectInvalid(await patchService(svc.id, { publicRoutes: [route] }), "publicRoutes.0");
    expectInvalid(await patchService(svc.id, { siwxRoutes: [route] }), "siwxRoutes.0");
  });

  it.each(BAD_ROUTES)("paywall targetRoute refuses %j on create and update", async (route) => {
    const svc = await createService(who);
    expectInvalid(await postPaywall(routePaywallBody(svc.id, { targetRoute: route })), "targetRoute");
    const pw = await createPaywall(who, routePaywallBody(svc.id));
    expectInvalid(await patchPaywall(pw.id, { targetRoute: route }), "targetRoute");
    expect((await storedPaywall(pw.id))?.targetRoute).toBe("/v1/forecast");
  });

  it("accepts absolute paths with URL path characters, kept as written", async () => {
    const routes = ["/v1/forecast/:city", "/a/*", "/users/@me", "/%7Euser", "/v1//daily/"];
    const svc = await createService(who, { publicRoutes: routes, siwxRoutes: ["/me"] });
    expect(svc.publicRoutes).toEqual(routes);
    const pw = await createPaywall(who, routePaywallBody(svc.id, { targetRoute: "/v1/forecast/:city" }));
    expect(pw.targetRoute).toBe("/v1/forecast/:city");
  });
});

describe("slugs", () => {
  it.each([".", "..", "..."])("a slug of dots only (%j) is refused", async (slug) => {
    expectInvalid(await postPaywall(proxyPaywallBody({ slug })), "slug", /dots/);
  });

  it("dots inside a slug are fine", async () => {
    expect((await createPaywall(who, proxyPaywallBody({ slug: `v1.2-${Date.now()}` }))).slug).toMatch(/^v1\.2-/);
  });
});

describe("header names and values", () => {
  const customHeader = (headerName: string, headerValue = "v") => ({
    authMethod: "custom-header",
    authConfig: { headerName, headerValue },
  });

  it.each([
    "Host",
    "Content-Length",
    "transfer-encoding",
    "Authorization",
    "X-PAYMENT",
    "Payment-Receipt",
    "CF-Connecting-IP",
    "X-Forwarded-For",
    "Proxy-Authorization",
    "X Header",
    "X-A:b",
    "X-Ü",
  ])("authConfig.headerName %j → 400 naming authConfig.headerName", async (name) => {
    expectInvalid(await postService(customHeader(name)), "authConfig.headerName");
  });

  it("authConfig header values with CR, LF or NUL → 400; on update too", async () => {
    for (const value of ["a\r\nX-Injected: 1", "a\nb", "a\u0000"]) {
      expectInvalid(await postService(customHeader("X-Api-Key", value)), "authConfig.headerValue", /control characters/);
      expectInvalid(await postService({ authMethod: "bearer", authConfig: { bearerToken: value } }), "authConfig.bearerToken");
    }
    const svc = await createService(who, customHeader("X-Api-Key", "ok"));
    expectInvalid(
      await patchService(svc.id, { authConfig: { headerName: "X-Api-Key", headerValue: "a\r\nb" } }),
      "authConfig.headerValue",
    );
    expectInvalid(
      await patchService(svc.id, { authConfig: { headerName: "Host", headerValue: "***" } }),
      "authConfig.headerName",
    );
    expect(svc.authConfig).toEqual({ headerName: "X-Api-Key", headerValue: "***" });
  });

  it("paramName and fieldName refuse & = # ? and controls", async () => {
    for (const name of ["a&b", "a=b", "a#b", "a?b", "a\u0000", ""]) {
      expectInvalid(
        await postService({ authMethod: "query-param", authConfig: { paramName: name, paramValue: "v" } }),
        "authConfig.paramName",
      );
      expectInvalid(
        await postService({ authMethod: "json-body-field", authConfig: { fieldName: name, fieldValue: "v" } }),
        "authConfig.fieldName",
      );
    }
  });

  it.each(["Host", "Connection", "PAYMENT-SIGNATURE", "X-Forwarded-Host", "X-HTTP-Method-Override", "bad header", "X:y"])(
    "paywall header key %j → 400 naming headers.0.key, on create and update",
    async (key) => {
      expectInvalid(await postPaywall(proxyPaywallBody({ headers: [{ key, value: "v" }] })), "headers.0.key");
      const pw = await createPaywall(who, proxyPaywallBody());
      expectInvalid(await patchPaywall(pw.id, { headers: [{ key, value: "v" }] }), "headers.0.key");
    },
  );

  it("a paywall header key with | is refused (it would break the binding of its encrypted value), never a 500", async () => {
    for (const key of ["|", "X|Y"]) {
      expectInvalid(await postPaywall(proxyPaywallBody({ headers: [{ key, value: "v" }] })), "headers.0.key", /\|/);
    }
  });

  it("paywall header values refuse CR, LF and NUL; tokens such as X-Custom.Header_1 are fine", async () => {
    for (const value of ["a\r\nb", "a\nb", "a\u0000b"]) {
      expectInvalid(await postPaywall(proxyPaywallBody({ headers: [{ key: "X-A", value }] })), "headers.0.value");
    }
    const pw = await createPaywall(who, proxyPaywallBody({ headers: [{ key: "X-Custom.Header_1", value: "v" }] }));
    expect(pw.headers).toEqual([{ key: "X-Custom.Header_1", value: "***" }]);
  });

  // The names the platform owns and the buyer's own credentials: never forwarded, so never listed (README).
  const NEVER_FORWARDED = [
    "Authorization",
    "authorization",
    "Host",
    "X-Forwarded-For",
    "x-forwarded-proto",
    "Forwarded",
    "CF-Connecting-IP",
    "cf-ray",
    "PAYMENT-SIGNATURE",
    "Payment-Receipt",
    "X-PAYMENT",
    "Proxy-Authorization",
    "Connection",
    "Transfer-Encoding",
    "Content-Length",
    "X-HTTP-Method-Override",
    "X-Real-IP",
    "WWW-Authenticate",
    "Cookie",
    "X-API-Key",
    "x-api-secret",
    "SIGN-IN-WITH-X",
    "X-SIWX-Address",
    "x-siwx-chain",
  ];

  it.each(NEVER_FORWARDED)("allowedHeaders refuses %j with 400 naming the item; nothing changes", async (name) => {
    const pw = await createPaywall(who, proxyPaywallBody());
    expectInvalid(await patchPaywall(pw.id, { allowedHeaders: ["Accept", name] }), "allowedHeaders.1", /never forwarded/);
    expect((await storedPaywall(pw.id))?.allowedHeaders).toEqual([]);
  });

  /** Control characters a header value or a secret must not hold (TAB aside): C0, DEL, C1, line separators. */
  const VALUE_CONTROLS = ["\u0001", "\u001b", "\u007f", "\u0085", "\u009b", "\u2028", "\u2029", "\r", "\u0000"];
  const SECRET_FIELDS: [string, Record<string, string>, string][] = [
    ["bearer", {}, "bearerToken"],
    ["token", {}, "token"],
    ["x-api-key", {}, "apiKey"],
    ["custom-header", { headerName: "X-Upstream-Key" }, "headerValue"],
    ["query-param", { paramName: "api_token" }, "paramValue"],
    ["x-api-key-secret", { apiKey: "k" }, "apiSecret"],
    ["x-api-key-secret", { apiSecret: "s" }, "apiKey"],
    ["json-body-field", { fieldName: "token" }, "fieldValue"],
  ];

  it.each(SECRET_FIELDS)("authMethod %s: %j + %s refuses every control character but TAB", async (method, rest, field) => {
    for (const bad of VALUE_CONTROLS) {
      const res = await postService({ authMethod: method, authConfig: { ...rest, [field]: `sec${bad}ret` } });
      expectInvalid(res, `authConfig.${field}`, /control characters/);
    }
    const ok = await postService({ authMethod: method, authConfig: { ...rest, [field]: "sec\tret" } });
    expect(ok.status, ok.text).toBe(201);
  });

  it("paywall header values refuse every control character but TAB", async () => {
    for (const bad of VALUE_CONTROLS) {
      expectInvalid(await postPaywall(proxyPaywallBody({ headers: [{ key: "X-A", value: `v${bad}v` }] })), "headers.0.value");
    }
    expect((await postPaywall(proxyPaywallBody({ headers: [{ key: "X-A", value: "v\tv" }] }))).status).toBe(201);
  });

  it("allowedHeaders items are tokens; queryParams keys are field names", async () => {
    const pw = await createPaywall(who, proxyPaywallBody());
    expectInvalid(await patchPaywall(pw.id, { allowedHeaders: ["Accept", "bad header"] }), "allowedHeaders.1");
    expectInvalid(await patchPaywall(pw.id, { allowedHeaders: ["X\r\nY"] }), "allowedHeaders.0");
    expect(await patchPaywall(pw.id, { allowedHeaders: ["Accept", "X-Request-Id"] })).toMatchObject({ status: 200 });
    expectInvalid(await patchPaywall(pw.id, { queryParams: [{ key: "a&b", value: "1" }] }), "queryParams.0.key");
    expectInvalid(await postPaywall(proxyPaywallBody({ queryParams: [{ key: "a=b", value: "1" }] })), "queryParams.0.key");
  });
});

describe("free text", () => {
  it("single-line fields refuse every control character: name, categories, paywall name", async () => {
    for (const bad of ["a\u0000b", "a\nb", "a\tb", "a\u001b[31m", "a\u007f", "a\u0085"]) {
      expectInvalid(await postService({ name: bad }), "name", /control/);
      expectInvalid(await postService({ categories: ["ok", bad] }), "categories.1", /control/);
      expectInvalid(await postPaywall(proxyPaywallBody({ name: bad })), "name", /control/);
    }
    const svc = await createService(who);
    expectInvalid(await patchService(svc.id, { name: "x\u0000" }), "name");
  });

  it("single-line fields refuse bidirectional controls (a name that shows as another) and line separators", async () => {
    for (const bad of ["Acme\u202eevil", "a\u202ab", "a\u202db", "a\u2066b\u2069", "a\u2067b", "a\u2068b", "a\u2028b"]) {
      expectInvalid(await postService({ name: bad }), "name", /bidirectional/);
      expectInvalid(await postService({ categories: [bad] }), "categories.0", /bidirectional/);
      expectInvalid(await postPaywall(proxyPaywallBody({ name: bad })), "name", /bidirectional/);
      expectInvalid(await postPaywall(proxyPaywallBody({ queryParams: [{ key: "q", value: bad }] })), "queryParams.0.value");
    }
    expect((await createService(who, { name: "מזג אוויר API" })).name).toBe("מזג אוויר API");
  });

  it("multi-line fields allow tab and line breaks and refuse other controls: description, xGuidance", async () => {
    const text = "Line 1\r\nLine 2\n\tindented";
    const svc = await createService(who, { description: text, xGuidance: text });
    expect(svc).toMatchObject({ description: text, xGuidance: text });
    const pw = await createPaywall(who, proxyPaywallBody({ description: text }));
    expect(pw.description).toBe(text);
    for (const bad of ["a\u0000b", "a\u0008", "a\u001b[2J", "a\u007f"]) {
      expectInvalid(await postService({ description: bad }), "description", /control/);
      expectInvalid(await postService({ xGuidance: bad }), "xGuidance", /control/);
      expectInvalid(await patchPaywall(pw.id, { description: bad }), "description", /control/);
    }
  });
});
