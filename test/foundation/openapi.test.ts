import { beforeEach, describe, expect, it, vi } from "vitest";
import { ERROR_STATUS } from "../../src/errors.ts";
import { call, callJson } from "../support/factories.ts";
import { quietLogs } from "../support/harness.ts";

beforeEach(() => {
  vi.restoreAllMocks();
  quietLogs();
});

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
  const res = await callJson<Doc>("/openapi.json");
  expect(res.status).toBe(200);
  return res.body;
};

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document, served without a key", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    const doc = (await res.json()) as Doc;
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

  it("every documented operation under /v1 except health exists and requires a key (401 without one)", async () => {
    const doc = await getDoc();
    for (const [path, item] of Object.entries(doc.paths)) {
      if (path === "/v1/health") continue;
      for (const method of Object.keys(item).filter((m) => METHODS.includes(m))) {
        const res = await call(path.replace(/\{\w+\}/g, "x"), { method: method.toUpperCase() });
        expect({ op: `${method} ${path}`, status: res.status }).toEqual({ op: `${method} ${path}`, status: 401 });
      }
    }
  });
});
