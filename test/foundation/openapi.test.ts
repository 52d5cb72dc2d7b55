import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../src/core/http/errors.ts";
import { api } from "../support/client.ts";
import { createApiKey } from "../support/factories.ts";

interface Operation {
  summary?: string;
  security?: unknown[];
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref?: string } }> }
  >;
}

interface Doc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, { properties: Record<string, { enum?: string[] }> }>;
  };
}

const METHODS = ["get", "post", "put", "patch", "delete"];
const getDoc = async () => {
  const res = await api<Doc>("/openapi.json");
  expect(res.status).toBe(200);
  return res.body;
};

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document, served without a key", async () => {
    const res = await api("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe("1.1.0");
  });

  it("declares both ways to send the key", async () => {
    const { components } = await getDoc();
    expect(components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(components.securitySchemes.apiKeyHeader).toMatchObject({ type: "apiKey", in: "header", name: "X-Api-Key" });
  });

  it("lists /v1/health (no key) and /v1/me (either key header)", async () => {
    const { paths } = await getDoc();
    expect(paths["/v1/health"]?.get).toBeDefined();
    expect(paths["/v1/health"]?.get?.security ?? []).toEqual([]);
    expect(paths["/v1/me"]?.get).toBeDefined();
    expect(paths["/v1/me"]?.get?.security).toEqual(expect.arrayContaining([{ bearerAuth: [] }, { apiKeyHeader: [] }]));
  });

  it("documents /v1/me's errors 401, 403 and 429 with the error envelope, and Retry-After on 429", async () => {
    const doc = await getDoc();
    const responses = doc.paths["/v1/me"]!.get!.responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(["200", "401", "403", "429"]));
    for (const status of ["401", "403", "429"]) {
      const schema = responses[status]?.content?.["application/json"]?.schema;
      expect(schema?.$ref ?? "").toMatch(/Error$/);
    }
    expect(responses["401"]?.description).toMatch(/INVALID_API_KEY/);
    expect(responses["403"]?.description).toMatch(/IP_NOT_ALLOWED/);
    expect(responses["429"]?.description).toMatch(/RATE_LIMITED/);
    expect(responses["429"]?.headers?.["Retry-After"]).toBeDefined();
  });

  it("the Error schema's codes are exactly the codes the runtime knows", async () => {
    const { components } = await getDoc();
    const codes = components.schemas.Error?.properties.code?.enum ?? [];
    expect([...codes].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  });

  it("every operation has a summary and at least one success response", async () => {
    const { paths } = await getDoc();
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item).filter(([m]) => METHODS.includes(m))) {
        expect(op.summary, `${method} ${path}`).toBeTruthy();
        expect(
          Object.keys(op.responses).some((s) => s.startsWith("2")),
          `${method} ${path}`,
        ).toBe(true);
      }
    }
  });
});
describe("the document's promises (operation ids, tags, headers, details, formats)", () => {
  interface FullOperation extends Operation {
    operationId?: string;
    tags?: string[];
    "x-scope"?: string;
  }
  interface FullDoc {
    info: { contact?: { email?: string; url?: string }; license?: { name?: string } };
    tags?: { name: string; description?: string }[];
    paths: Record<string, Record<string, FullOperation>>;
    components: {
      headers?: Record<string, unknown>;
      schemas: Record<string, { properties?: Record<string, { format?: string; anyOf?: { $ref?: string }[] }> }>;
    };
  }
  const full = async () => (await getDoc()) as unknown as FullDoc;
  const operations = (doc: FullDoc) =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m]) => METHODS.includes(m))
        .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
    );

  it("every operation has its stable camelCase operationId, each used once", async () => {
    const ids = Object.fromEntries(operations(await full()).map(({ key, op }) => [key, op.operationId]));
    expect(ids).toEqual({
      "GET /v1/health": "getHealth",
      "GET /v1/me": "getMe",
      "POST /v1/services": "createService",
      "GET /v1/services": "listServices",
      "GET /v1/services/{id}": "getService",
      "PATCH /v1/services/{id}": "updateService",
      "DELETE /v1/services/{id}": "deleteService",
      "GET /v1/services/{id}/discovery": "getServiceDiscovery",
      "POST /v1/paywalls": "createPaywall",
      "GET /v1/paywalls": "listPaywalls",
      "GET /v1/paywalls/{id}": "getPaywall",
      "PATCH /v1/paywalls/{id}": "updatePaywall",
      "DELETE /v1/paywalls/{id}": "deletePaywall",
      "GET /v1/transactions": "listTransactions",
      "GET /v1/transactions/{id}": "getTransaction",
      "GET /v1/channels": "listChannels",
      "GET /v1/channels/{id}": "getChannel",
      "GET /v1/events": "listEvents",
      "GET /v1/events/{id}": "getEvent",
      "POST /v1/webhook-endpoints": "createWebhookEndpoint",
      "GET /v1/webhook-endpoints": "listWebhookEndpoints",
      "GET /v1/webhook-endpoints/{id}": "getWebhookEndpoint",
      "PATCH /v1/webhook-endpoints/{id}": "updateWebhookEndpoint",
      "DELETE /v1/webhook-endpoints/{id}": "deleteWebhookEndpoint",
      "POST /v1/webhook-endpoints/{id}/secret/roll": "rollWebhookSecret",
      "POST /v1/webhook-endpoints/{id}/test": "sendTestWebhook",
      "GET /v1/webhook-endpoints/{id}/deliveries": "listWebhookDeliveries",
      "POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry": "retryWebhookDelivery",
    });
  });

  it("lists every tag an operation uses, each with a description; names a contact and a license", async () => {
    const doc = await full();
    const declared = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
    for (const { key, op } of operations(doc)) {
      for (const tag of op.tags ?? []) expect(declared.get(tag), `${key}: tag ${tag}`).toBeTruthy();
      expect(op.tags?.length, key).toBeGreaterThan(0);
    }
    expect(doc.info.contact?.email).toMatch(/@/);
    expect(doc.info.license?.name).toBeTruthy();
  });

  it("states security on every operation: [] where no key is needed, and x-scope only behind a key", async () => {
    for (const { key, op } of operations(await full())) {
      expect(Array.isArray(op.security), key).toBe(true);
      if (op.security?.length === 0) expect(op["x-scope"], key).toBeUndefined();
    }
    const doc = await full();
    expect(doc.paths["/v1/health"]?.get?.security).toEqual([]);
  });

  it("declares X-Request-Id on every response, RateLimit-* on every 2xx/4xx, Retry-After on 429/503, WWW-Authenticate on 401", async () => {
    const doc = await full();
    for (const name of [
      "X-Request-Id",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "Retry-After",
      "WWW-Authenticate",
    ]) {
      expect(doc.components.headers?.[name], name).toBeDefined();
    }
    for (const { key, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = Object.keys(response.headers ?? {});
        const expected = ["X-Request-Id"];
        if (Number(status) < 500) expected.push("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
        if (status === "429" || status === "503") expected.push("Retry-After");
        if (status === "401") expected.push("WWW-Authenticate");
        expect(headers, `${key} ${status}`).toEqual(expect.arrayContaining(expected));
      }
      if (op.security?.length) expect(Object.keys(op.responses), key).toEqual(expect.arrayContaining(["401", "429", "503"]));
    }
  });

  it("documents details as a list of {path, message} for every code that has one", async () => {
    const { components } = await full();
    const details = components.schemas.Error?.properties?.details as {
      type?: string;
      items?: { $ref?: string };
      description?: string;
    };
    expect(details.type).toBe("array");
    expect(details.items?.$ref).toBe("#/components/schemas/Issue");
    expect((components.schemas.Issue as { required?: string[] }).required).toEqual(["path", "message"]);
    for (const code of ["VALIDATION_ERROR", "SSRF_BLOCKED", "INVALID_SERVICE", "INSUFFICIENT_SCOPE"]) {
      expect(details.description, code).toContain(code);
    }
  });

  it("keeps format on response fields: uri, email, date-time", async () => {
    const { components } = await full();
    const format = (schema: string, field: string) => components.schemas[schema]?.properties?.[field]?.format;
    expect(format("Service", "baseUrl")).toBe("uri");
    expect(format("Service", "contactEmail")).toBe("email");
    expect(format("Service", "createdAt")).toBe("date-time");
    expect(format("Paywall", "targetUrl")).toBe("uri");
    expect(format("Paywall", "facilitatorUrl")).toBe("uri");
    expect(format("Transaction", "settledAt")).toBe("date-time");
  });

  it("x-scope is the scope the runtime checks: a key without scopes is refused with details[0].reason = x-scope", async () => {
    const { key } = await createApiKey({ scopes: [] });
    const checked: string[] = [];
    for (const { key: op, op: operation } of operations(await full())) {
      if (!operation.security?.length) continue;
      const [method, template] = op.split(" ") as [string, string];
      const res = await api(template.replace(/\{\w+\}/g, "x"), {
        method,
        key,
        ...(method === "POST" || method === "PATCH" ? { body: {} } : {}),
      });
      const body = res.body as { code?: string; details?: { path: string; message: string; reason?: string }[] };
      if (operation["x-scope"]) {
        expect({ op, status: res.status, details: body.details }).toEqual({
          op,
          status: 403,
          details: [{ path: "", message: `Needs ${operation["x-scope"]}; the key has no scope`, reason: operation["x-scope"] }],
        });
        checked.push(op);
      } else {
        expect({ op, status: res.status }).toEqual({ op, status: 200 });
      }
    }
    expect(checked.length).toBe(26);
  });
});

describe("the headers the document declares are the headers responses send", () => {
  const hex = () => Math.floor(Math.random() * 0x10000).toString(16);

  it("on every operation, for 2xx/400/401/403/404/429 from keys, missing keys and exhausted keys and addresses", {
    timeout: 60_000,
  }, async () => {
    const doc = await getDoc();
    const full = await createApiKey();
    const scopeless = await createApiKey({ scopes: [] });
    const revoked = await createApiKey({ status: "revoked" });
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item).filter(([m]) => METHODS.includes(m))) {
        const path = template.replace(/\{[^}]+\}/g, "x");
        const body = method === "post" || method === "patch" ? { body: {} } : {};
        const call = (options: Parameters<typeof api>[1]) => api(path, { method: method.toUpperCase(), ...body, ...options });
        const ip = () => `2001:db8:${hex()}:${hex()}::1`;
        const oneKeyRequest = { RATE_LIMIT_MAX: "1" };
        const oneAddressRequest = { IP_RATE_LIMIT_MAX: "1" };
        const exhaustedKey = await createApiKey();
        const exhaustedAddress = ip();
        await call({ key: exhaustedKey.key, env: oneKeyRequest });
        await call({ ip: exhaustedAddress, env: oneAddressRequest });
        const responses = [
          await call({}),
          await call({ key: full.key }),
          await call({ key: scopeless.key }),
          await call({ key: revoked.key, ip: ip() }),
          await call({ key: exhaustedKey.key, env: oneKeyRequest }),
          await call({ ip: exhaustedAddress, env: oneAddressRequest }),
        ];
        for (const res of responses) {
          const where = `${method.toUpperCase()} ${template} → ${res.status}`;
          seen.add(String(res.status));
          const declared = op.responses[String(res.status)];
          if (!declared) {
            problems.push(`${where}: status not declared`);
            continue;
          }
          for (const name of Object.keys(declared.headers ?? {})) {
            if (!res.headers.has(name)) problems.push(`${where}: declares ${name}, not sent`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect([...seen].sort()).toEqual(["200", "400", "401", "403", "404", "429"]);
  });
});
