// The order of checks and the statuses it yields, over HTTP through the Worker: authentication before any body is
// read, client disconnects that are not server errors, strict query strings, keys refused in URLs, CORS preflights.
import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../src/api/middleware/request-guards.ts";
import { getConfig } from "../../src/core/config.ts";
import { hasScope, SCOPES, type Scope } from "../../src/core/keys/scopes.ts";
import { api, read, send } from "../support/client.ts";
import { consoleOutput } from "../support/console.ts";
import { createApiKey, unknownKey } from "../support/factories.ts";

const BODY_ROUTES = [
  ["POST", "/v1/services"],
  ["PATCH", "/v1/services/svc_x"],
  ["POST", "/v1/paywalls"],
  ["PATCH", "/v1/paywalls/pw_x"],
  ["POST", "/v1/me"],
  ["PUT", "/v1/nope"],
] as const;

/** Bodies that a reading server would refuse with 400, 413 or 415. */
const BAD_BODIES: { name: string; type: string | null; body: () => BodyInit }[] = [
  { name: "text/plain", type: "text/plain", body: () => "hello" },
  { name: "form", type: "application/x-www-form-urlencoded", body: () => "a=1&b=2" },
  { name: "no content type", type: null, body: () => new Blob(['{"a":1}']) },
  { name: "__proto__ key", type: "application/json", body: () => '{"__proto__":1}' },
  { name: "nested __proto__", type: "application/json", body: () => '{"a":{"__proto__":{"x":1}}}' },
  { name: "malformed JSON", type: "application/json", body: () => '{"name":' },
  { name: "unknown field", type: "application/json", body: () => '{"bogus":true}' },
  { name: "chunked over 100 KiB", type: "application/json", body: () => chunked(new Uint8Array(MAX_BODY_BYTES + 4096)) },
];

function chunked(bytes: Uint8Array, chunkSize = 8192): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

const identities = async () => {
  const revoked = await createApiKey({ status: "revoked" });
  const paused = await createApiKey({ status: "paused" });
  return [
    { who: "no key", headers: {} as Record<string, string> },
    { who: "malformed key", headers: { authorization: "Bearer nope" } },
    { who: "unknown key", headers: { authorization: `Bearer ${unknownKey()}` } },
    { who: "revoked key", headers: { "x-api-key": revoked.key } },
    { who: "paused key", headers: { authorization: `Bearer ${paused.key}` } },
  ];
};

describe("authentication comes before the body", () => {
  it("a request without a usable key is 401 whatever its body (6 routes × 8 bodies × 5 identities)", {
    timeout: 60_000,
  }, async () => {
    const outcomes: string[] = [];
    for (const { who, headers } of await identities()) {
      for (const [method, path] of BODY_ROUTES) {
        for (const bad of BAD_BODIES) {
          const h = new Headers(headers);
          if (bad.type) h.set("content-type", bad.type);
          const res = await send(new Request(`https://api.test${path}`, { method, headers: h, body: bad.body() }));
          const body = (await read(res)).body;
          outcomes.push(`${who} ${method} ${path} ${bad.name} → ${res.status} ${body.code}`);
        }
      }
    }
    expect(outcomes.filter((o) => !/→ 401 (INVALID_API_KEY|KEY_REVOKED|KEY_INACTIVE)$/.test(o))).toEqual([]);
    expect(outcomes).toHaveLength(5 * BODY_ROUTES.length * BAD_BODIES.length);
  });

  it("the body of an unauthenticated request is never drained (an endless upload: 401 after at most one chunk)", async () => {
    const { key } = await createApiKey();
    const upload = () => {
      const state = { pulled: 0 };
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            state.pulled++;
            controller.enqueue(new Uint8Array(16 * 1024));
          },
        },
        { highWaterMark: 0 },
      );
      return { state, body };
    };
    const ids = [...(await identities()), { who: "valid key", headers: { authorization: `Bearer ${key}` } }];
    const seen: { who: string; status: number; drained: boolean }[] = [];
    for (const { who, headers } of ids) {
      const { state, body } = upload();
      const res = await send(
        new Request("https://api.test/v1/services", {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body,
        }),
      );
      seen.push({ who, status: res.status, drained: state.pulled * 16 * 1024 > MAX_BODY_BYTES });
    }
    // The transport hands the Worker the first chunk on its own; only a Worker that reads pulls past 100 KiB.
    expect(seen).toEqual(ids.map(({ who }) => ({ who, status: who === "valid key" ? 413 : 401, drained: who === "valid key" })));
  });

  it("a declared Content-Length over 100 KiB is 413 before authentication, without reading the body", async () => {
    const payload = "x".repeat(MAX_BODY_BYTES + 1);
    for (const [method, path] of BODY_ROUTES) {
      const res = await send(
        new Request(`https://api.test${path}`, {
          method,
          headers: { "content-type": "text/plain", "content-length": String(payload.length) },
          body: payload,
        }),
      );
      const body = (await read(res)).body;
      expect({ method, path, status: res.status, code: body.code }).toEqual({
        method,
        path,
        status: 413,
        code: "VALIDATION_ERROR",
      });
    }
  });

  it("with a valid key the same bodies get their honest statuses", async () => {
    const { key } = await createApiKey();
    const expected: Record<string, number> = {
      "text/plain": 415,
      form: 415,
      "no content type": 415,
      "__proto__ key": 400,
      "nested __proto__": 400,
      "malformed JSON": 400,
      "unknown field": 400,
      "chunked over 100 KiB": 413,
    };
    for (const bad of BAD_BODIES) {
      const h = new Headers({ authorization: `Bearer ${key}` });
      if (bad.type) h.set("content-type", bad.type);
      const res = await send(new Request("https://api.test/v1/services", { method: "POST", headers: h, body: bad.body() }));
      const body = (await read(res)).body;
      expect({ body: bad.name, status: res.status, code: body.code }).toEqual({
        body: bad.name,
        status: expected[bad.name],
        code: "VALIDATION_ERROR",
      });
    }
  });
});

describe("the scope comes before the body", () => {
  type Operation = { method: string; template: string; scope: Scope };
  /** Every operation of the document behind a scope that takes a body (read from `x-scope` and `requestBody`). */
  const scopedWrites = async (): Promise<Operation[]> => {
    const doc = (await api("/openapi.json")).body as {
      paths: Record<string, Record<string, { "x-scope"?: Scope; requestBody?: unknown }>>;
    };
    return Object.entries(doc.paths).flatMap(([template, item]) =>
      Object.entries(item).flatMap(([method, op]) =>
        op["x-scope"] && op.requestBody ? [{ method: method.toUpperCase(), template, scope: op["x-scope"] }] : [],
      ),
    );
  };

  it("a valid key without the operation's scope is 403 INSUFFICIENT_SCOPE whatever its body (every scoped write × 8 bodies)", {
    timeout: 60_000,
  }, async () => {
    const operations = await scopedWrites();
    expect(operations.map((o) => `${o.method} ${o.template}`).sort()).toEqual([
      "PATCH /v1/paywalls/{id}",
      "PATCH /v1/services/{id}",
      "PATCH /v1/webhook-endpoints/{id}",
      "POST /v1/paywalls",
      "POST /v1/services",
      "POST /v1/webhook-endpoints",
      "POST /v1/webhook-endpoints/{id}/secret/roll",
    ]);
    const outcomes: string[] = [];
    for (const { method, template, scope } of operations) {
      // Every other scope: the read half of the same resource included.
      const { key } = await createApiKey({ scopes: SCOPES.filter((s) => !hasScope([s], scope)) });
      for (const bad of BAD_BODIES) {
        const h = new Headers({ authorization: `Bearer ${key}` });
        if (bad.type) h.set("content-type", bad.type);
        const path = template.replace(/\{[^}]+\}/g, "x");
        const res = await send(new Request(`https://api.test${path}`, { method, headers: h, body: bad.body() }));
        const body = (await read(res)).body;
        outcomes.push(`${method} ${template} ${bad.name} → ${res.status} ${body.code} ${body.details?.[0]?.reason}`);
      }
    }
    expect(outcomes.filter((o) => !/→ 403 INSUFFICIENT_SCOPE \w+:write$/.test(o))).toEqual([]);
    expect(outcomes).toHaveLength(operations.length * BAD_BODIES.length);
  });

  it("the body a key without the scope sends is never drained (an endless upload: 403 after at most one chunk)", async () => {
    const { key } = await createApiKey({ scopes: ["services:read"] });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled++;
          controller.enqueue(new Uint8Array(16 * 1024));
        },
      },
      { highWaterMark: 0 },
    );
    const res = await send(
      new Request("https://api.test/v1/services", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
      }),
    );
    expect(res.status).toBe(403);
    expect(pulled * 16 * 1024).toBeLessThanOrEqual(MAX_BODY_BYTES);
  });

  it("a declared Content-Length over 100 KiB stays 413 for every caller, before the key and its scope", async () => {
    const { key } = await createApiKey({ scopes: ["events:read"] });
    const payload = "x".repeat(MAX_BODY_BYTES + 1);
    for (const { method, template } of await scopedWrites()) {
      const res = await send(
        new Request(`https://api.test${template.replace(/\{[^}]+\}/g, "x")}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "content-length": String(payload.length),
          },
          body: payload,
        }),
      );
      expect({ method, template, status: res.status }).toEqual({ method, template, status: 413 });
    }
  });
});

// Over the test transport a failing upload arrives as a short body, so the disconnect is made where the Worker reads it:
// the app gets a request whose body stream fails mid-way, as workerd's does when the client goes away. The same
// behaviour over a real socket: test/browser/client-abort.test.ts.
describe("a client that disconnects mid-upload", () => {
  it("is logged as a client abort (499), never as a 500 or an error-level line", async () => {
    const { key } = await createApiKey({ scopes: ["services:write", "paywalls:write"] });
    const logs = consoleOutput();
    for (const [method, path] of [
      ["POST", "/v1/services"],
      ["PATCH", "/v1/paywalls/pw_x"],
    ] as const) {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 2) return controller.enqueue(new TextEncoder().encode('{"name":"Weather API","description":"'));
          controller.error(new Error("Network connection lost."));
        },
      });
      const request = new Request(`https://api.test${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
      });
      const res = await send(request, {});
      expect(res.status).toBe(499);
      const line = logs.entries().find((e) => e.requestId === res.headers.get("X-Request-Id"));
      expect(line).toMatchObject({ method, path, status: 499, error: "CLIENT_ABORTED" });
    }
    expect(logs.entries().filter((e) => typeof e.status === "number" && e.status >= 500)).toEqual([]);
    expect(logs.at("error")).toEqual([]);
  });
});

describe("query strings are strict", () => {
  const LISTS = ["/v1/services", "/v1/paywalls", "/v1/transactions", "/v1/events"];
  const NOT_CANONICAL = [
    "0x10",
    "1e2",
    "+5",
    "05",
    "00",
    "5.0",
    "5.",
    " 5", // the URL parser sends it as %205
    "%205",
    "5%20",
    "-0",
    "-1",
    "",
    "1_0",
    "1,0",
    "Infinity",
    "NaN",
    "0b1",
    "0o7",
    "%EF%BC%95", // fullwidth 5
    "%D9%A5", // Arabic-Indic 5
    "5%00",
    "true",
  ];

  it.each(["limit", "offset"])(
    "%s refuses every non-canonical spelling on every list (23 spellings × 4 lists)",
    { timeout: 60_000 },
    async (name) => {
      const { key } = await createApiKey();
      const accepted: string[] = [];
      for (const path of LISTS) {
        for (const raw of NOT_CANONICAL) {
          const { status, body } = await api(`${path}?${name}=${raw}`, { key });
          const issue = (body.details ?? []).find((d: { path: string }) => d.path === name);
          if (status !== 400 || body.code !== "VALIDATION_ERROR" || !issue) accepted.push(`${path}?${name}=${raw} → ${status}`);
        }
      }
      expect(accepted).toEqual([]);
    },
  );

  it("canonical values at the bounds are accepted, and out-of-range ones refused", async () => {
    const { key } = await createApiKey();
    for (const path of LISTS) {
      for (const query of ["limit=1", "limit=100", "limit=20&offset=0", "offset=1000000"]) {
        const { status, body } = await api(`${path}?${query}`, { key });
        expect({ path, query, status }).toEqual({ path, query, status: 200 });
        expect(body.meta.pagination.limit).toBe(Number(/limit=(\d+)/.exec(query)?.[1] ?? 20));
      }
      for (const query of ["limit=0", "limit=101", "offset=1000001", "limit=99999999999999999999"]) {
        const { status } = await api(`${path}?${query}`, { key });
        expect({ path, query, status }).toEqual({ path, query, status: 400 });
      }
    }
  });

  it("a repeated parameter is refused with a message that says so", async () => {
    const { key } = await createApiKey();
    for (const [path, query, name] of [
      ["/v1/services", "limit=5&limit=6", "limit"],
      ["/v1/services", "offset=0&offset=0", "offset"],
      ["/v1/services", "mode=testnet&mode=mainnet", "mode"],
      ["/v1/paywalls", "enabled=true&enabled=true", "enabled"],
      ["/v1/events", "eventType=ERROR&eventType=SUCCESS", "eventType"],
      ["/v1/transactions", "status=PENDING&limit=2&status=FAILED", "status"],
    ] as const) {
      const { status, body } = await api(`${path}?${query}`, { key });
      expect({ path, query, status }).toEqual({ path, query, status: 400 });
      expect(body.details).toEqual([{ path: name, message: expect.stringMatching(/repeated/i) }]);
    }
  });

  it("every documented operation refuses an unknown query parameter the same way", async () => {
    const { key } = await createApiKey();
    const doc = (await api("/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const answers: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((m) => ["get", "post", "patch", "delete"].includes(m))) {
        const path = template.replace(/\{[^}]+\}/g, "x");
        const options = method === "post" || method === "patch" ? { body: {} } : {};
        const { status, body } = await api(`${path}?x=1`, { key, method: method.toUpperCase(), ...options });
        const named = JSON.stringify(body.details) === JSON.stringify([{ path: "x", message: "Unknown query parameter" }]);
        answers.push(`${method.toUpperCase()} ${template} → ${status}${named ? " names x" : ""}`);
      }
    }
    expect(answers.length).toBeGreaterThanOrEqual(15);
    expect(answers.filter((a) => !a.endsWith("→ 400 names x"))).toEqual([]);
  });

  it("/openapi.json refuses an unknown or any query parameter like every endpoint", async () => {
    for (const query of ["x=1", "format=yaml", "download", "a=1&a=2"]) {
      const { status, body } = await api(`/openapi.json?${query}`);
      const name = query.split(/[=&]/)[0] as string;
      expect({ query, status }).toEqual({ query, status: 400 });
      expect(body).toMatchObject({ code: "VALIDATION_ERROR", details: [{ path: name, message: "Unknown query parameter" }] });
    }
    expect((await api("/openapi.json")).status).toBe(200);
  });

  it("an unauthenticated request is 401 whatever its query string (health needs no key and refuses it)", async () => {
    for (const query of ["x=1", "limit=0x10", "limit=1&limit=2"]) {
      expect((await api(`/v1/services?${query}`)).status).toBe(401);
      expect((await api(`/v1/me?${query}`)).status).toBe(401);
    }
    const { status, body } = await api("/v1/health?x=1");
    expect({ status, details: body.details }).toEqual({
      status: 400,
      details: [{ path: "x", message: "Unknown query parameter" }],
    });
    expect((await api("/v1/health")).status).toBe(200);
  });
});

describe("API keys in the URL", () => {
  const NAMES = ["api_key", "apiKey", "apikey", "API_KEY", "api-key", "key", "Key", "x-api-key", "token", "access_token", "auth"];

  it("are refused on every path, with or without a header key, with a message that says to use a header", async () => {
    const { key } = await createApiKey();
    const logs = consoleOutput();
    const failures: string[] = [];
    for (const path of ["/v1/me", "/v1/health", "/v1/services", "/v1/paywalls/pw_x", "/v1/nope"]) {
      for (const name of [...NAMES, "q"]) {
        for (const withHeader of [false, true]) {
          // A credential-like name is refused whatever its value; under any other name a key-shaped value gives it away.
          const value = name === "q" ? key : "not-a-key";
          const url = `${path}?${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
          const res = await api(url, withHeader ? { key } : {});
          const body = res.body;
          const ok =
            res.status === 400 &&
            body.code === "VALIDATION_ERROR" &&
            /header/i.test(body.error) &&
            /Authorization: Bearer/.test(body.error) &&
            JSON.stringify(body.details) ===
              JSON.stringify([{ path: name, message: "API keys go in a header, never in the URL" }]);
          if (!ok) failures.push(`${withHeader ? "header + " : ""}${path}?${name}= → ${res.status} ${body.code}`);
        }
      }
    }
    expect(failures).toEqual([]);
    // The log lines carry the path only and name the refusal; the key never reaches a log (the canary scan checks too).
    const entries = logs.entries();
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(entry.path).not.toContain("?");
      expect(entry.error).toBe("API_KEY_IN_URL");
    }
    expect(logs.lines.join("\n")).not.toContain(key);
  });

  it("ordinary parameters whose value is not a key are not mistaken for one", async () => {
    const { key } = await createApiKey();
    for (const path of ["/v1/paywalls?enabled=true&limit=5", "/v1/services?mode=testnet", "/v1/events?eventType=ERROR"]) {
      expect({ path, status: (await api(path, { key })).status }).toEqual({ path, status: 200 });
    }
  });
});

describe("CORS", () => {
  const preflight = (origin = "https://app.example.com") => ({
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "GET",
      "access-control-request-headers": "authorization, content-type",
    },
  });

  it("a preflight is never 401: 204 on every documented path and on unknown ones, with no CORS grant by default", async () => {
    const doc = (await api("/openapi.json")).body as { paths: Record<string, unknown> };
    const paths = [...Object.keys(doc.paths).map((p) => p.replace(/\{[^}]+\}/g, "x")), "/v1/nope", "/openapi.json", "/"];
    for (const path of paths) {
      const res = await api(path, preflight());
      expect({ path, status: res.status }).toEqual({ path, status: 204 });
      expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
      expect(res.headers.get("Access-Control-Allow-Headers")).toBeNull();
    }
  });

  it("without CORS_ALLOWED_ORIGINS a cross-origin call gets no Access-Control-Allow-Origin", async () => {
    const { key } = await createApiKey();
    const res = await api("/v1/me", { key, headers: { origin: "https://app.example.com" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("an allowed origin may send every request header the document declares and read every response header it declares", async () => {
    const doc = (await api("/openapi.json")).body as {
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
      components: { headers: Record<string, unknown> };
    };
    const requestHeaders = new Set(
      Object.values(doc.paths).flatMap((item) =>
        Object.values(item).flatMap((op) => (op.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name)),
      ),
    );
    expect(requestHeaders.size).toBeGreaterThan(0);
    const allowed = { CORS_ALLOWED_ORIGINS: "https://app.example.com" };
    const pre = await api("/v1/services", { ...preflight(), env: allowed });
    const allowHeaders = (pre.headers.get("Access-Control-Allow-Headers") ?? "").toLowerCase().split(/\s*,\s*/);
    for (const name of ["authorization", "x-api-key", "content-type", ...requestHeaders]) {
      expect(allowHeaders, name).toContain(name.toLowerCase());
    }
    const { key } = await createApiKey();
    const res = await api("/v1/me", { key, headers: { origin: "https://app.example.com" }, env: allowed });
    const exposed = (res.headers.get("Access-Control-Expose-Headers") ?? "").toLowerCase().split(/\s*,\s*/);
    for (const name of Object.keys(doc.components.headers)) expect(exposed, name).toContain(name.toLowerCase());
  });

  it("an origin listed in CORS_ALLOWED_ORIGINS is granted; any other origin is not", async () => {
    const { key } = await createApiKey();
    const allowed = { CORS_ALLOWED_ORIGINS: "https://app.example.com, http://localhost:5173" };
    for (const origin of ["https://app.example.com", "http://localhost:5173"]) {
      const pre = await api("/v1/services", { ...preflight(origin), env: allowed });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("Access-Control-Allow-Origin")).toBe(origin);
      expect(pre.headers.get("Access-Control-Allow-Headers")).toMatch(/Authorization/);
      expect(pre.headers.get("Access-Control-Allow-Headers")).toMatch(/X-Api-Key/);
      expect(pre.headers.get("Access-Control-Allow-Credentials")).toBeNull();
      const res = await api("/v1/me", { key, headers: { origin }, env: allowed });
      expect(res.status).toBe(200);
      expect(res.headers.get("Access-Control-Allow-Origin")).toBe(origin);
      expect(res.headers.get("Access-Control-Expose-Headers")).toMatch(/X-Request-Id/);
      expect(res.headers.get("Vary")).toMatch(/Origin/);
    }
    for (const origin of ["https://evil.example.com", "https://app.example.com.evil.test", "null", "https://APP.example.com"]) {
      const pre = await api("/v1/services", { ...preflight(origin), env: allowed });
      expect({ origin, status: pre.status, acao: pre.headers.get("Access-Control-Allow-Origin") }).toEqual({
        origin,
        status: 204,
        acao: null,
      });
    }
  });

  it.each([
    "*",
    "https://app.example.com/",
    "https://app.example.com/path",
    "app.example.com",
    "ftp://app.example.com",
    "https://a.test,*",
  ])("CORS_ALLOWED_ORIGINS=%j is refused at startup", (value) => {
    expect(() => getConfig({ CORS_ALLOWED_ORIGINS: value })).toThrow();
  });

  it("an empty or unset CORS_ALLOWED_ORIGINS means no origin", () => {
    expect(getConfig({}).corsAllowedOrigins).toEqual([]);
    expect(getConfig({ CORS_ALLOWED_ORIGINS: " , " }).corsAllowedOrigins).toEqual([]);
    expect(getConfig({ CORS_ALLOWED_ORIGINS: "https://a.test:8443" }).corsAllowedOrigins).toEqual(["https://a.test:8443"]);
  });
});
