import { describe, expect, it } from "vitest";
import {
  AUTH_CONFIG_FIELDS,
  AUTH_METHODS,
  type AuthMethod,
  authConfigIssues,
  isSecretField,
  maskAuthConfig,
} from "../../src/core/secrets/auth-config.ts";
import { AUTH_FIELDS } from "../fixtures/spec.ts";

const ORACLE = AUTH_FIELDS;
const METHODS = Object.keys(ORACLE) as AuthMethod[];
const full = (method: AuthMethod) =>
  Object.fromEntries([...ORACLE[method]!.names, ...ORACLE[method]!.secrets].map((f) => [f, `${f}-v`]));

describe("the field table", () => {
  it("has the nine methods of the contract", () => {
    expect([...AUTH_METHODS].sort()).toEqual([...METHODS].sort());
  });

  it.each(METHODS)("%s: fields as decided", (method) => {
    expect([...AUTH_CONFIG_FIELDS[method].names].sort()).toEqual([...ORACLE[method]!.names].sort());
    expect([...AUTH_CONFIG_FIELDS[method].secrets].sort()).toEqual([...ORACLE[method]!.secrets].sort());
  });

  it("isSecretField: secret values yes, names and unknown fields no", () => {
    expect(isSecretField("custom-header", "headerValue")).toBe(true);
    expect(isSecretField("custom-header", "headerName")).toBe(false);
    expect(isSecretField("bearer", "apiKey")).toBe(false);
    expect(isSecretField("x-api-key-secret", "apiSecret")).toBe(true);
    expect(isSecretField("none", "anything")).toBe(false);
  });
});

describe("authConfigIssues", () => {
  it.each(METHODS)("%s: the complete config has no issue", (method) => {
    expect(authConfigIssues(method, full(method))).toEqual([]);
  });

  const fields = METHODS.flatMap((m) => [...ORACLE[m]!.names, ...ORACLE[m]!.secrets].map((f) => [m, f] as const));

  it.each(fields)("%s: missing %s → one issue on authConfig.<field>", (method, field) => {
    const config = full(method);
    delete config[field];
    expect(authConfigIssues(method, config)).toEqual([
      { path: `authConfig.${field}`, message: expect.stringMatching(/required/i) },
    ]);
  });

  it.each(METHODS)("%s: an unknown field → one issue naming it", (method) => {
    expect(authConfigIssues(method, { ...full(method), extra: "x" })).toEqual([
      { path: "authConfig.extra", message: expect.any(String) },
    ]);
  });

  it("several problems → one issue each", () => {
    const issues = authConfigIssues("custom-header", { a: "1", b: "2" });
    expect(issues.map((i) => i.path).sort()).toEqual([
      "authConfig.a",
      "authConfig.b",
      "authConfig.headerName",
      "authConfig.headerValue",
    ]);
  });

  it("*** for a secret counts as present only when a value is stored", () => {
    expect(authConfigIssues("bearer", { bearerToken: "***" })).toEqual([
      { path: "authConfig.bearerToken", message: expect.any(String) },
    ]);
    expect(authConfigIssues("bearer", { bearerToken: "***" }, { bearerToken: "v1.k1.x.y" })).toEqual([]);
    expect(authConfigIssues("bearer", { bearerToken: "***" }, { token: "v1.k1.x.y" })).toHaveLength(1);
    expect(authConfigIssues("x-api-key-secret", { apiKey: "***", apiSecret: "new" }, { apiKey: "v1.k1.x.y" })).toEqual([]);
  });

  it("*** is never a valid name, stored or not", () => {
    const stored = { headerName: "X-A", headerValue: "v1.k1.x.y" };
    expect(authConfigIssues("custom-header", { headerName: "***", headerValue: "***" }, stored)).toEqual([
      { path: "authConfig.headerName", message: expect.any(String) },
    ]);
  });

  it("only the exact string *** is the placeholder", () => {
    expect(authConfigIssues("bearer", { bearerToken: "****" })).toEqual([]);
    expect(authConfigIssues("bearer", { bearerToken: " ***" })).toEqual([]);
  });
});

describe("maskAuthConfig", () => {
  it.each(METHODS)("%s: names in clear, every other value ***", (method) => {
    const masked = maskAuthConfig(method, full(method));
    expect(Object.keys(masked).sort()).toEqual(Object.keys(full(method)).sort());
    for (const f of ORACLE[method]!.names) expect(masked[f]).toBe(`${f}-v`);
    for (const f of ORACLE[method]!.secrets) expect(masked[f]).toBe("***");
  });

  it("fails closed: unknown fields and unknown methods are masked", () => {
    expect(maskAuthConfig("bearer", { bearerToken: "s", headerName: "X" })).toEqual({ bearerToken: "***", headerName: "***" });
    expect(maskAuthConfig("retired-method", { headerName: "X", secret: "s" })).toEqual({ headerName: "***", secret: "***" });
    expect(maskAuthConfig("none", {})).toEqual({});
  });
});

describe("authConfigIssues: each value's rule follows where it goes upstream", () => {
  const issueOf = (method: AuthMethod, field: string, value: string) =>
    authConfigIssues(method, { ...full(method), [field]: value }).find((i) => i.path === `authConfig.${field}`);

  it.each(["Host", "content-length", "Authorization", "X-Forwarded-For", "PAYMENT-SIGNATURE", "X Header", "X-A:b", ""])(
    "headerName %j is refused",
    (name) => {
      expect(issueOf("custom-header", "headerName", name)).toBeDefined();
    },
  );

  it("headerName X-Api-Key and Cookie are accepted", () => {
    expect(authConfigIssues("custom-header", { headerName: "X-Api-Key", headerValue: "v" })).toEqual([]);
    expect(authConfigIssues("custom-header", { headerName: "Cookie", headerValue: "session=1" })).toEqual([]);
  });

  it.each([
    ["bearer", "bearerToken"],
    ["token", "token"],
    ["x-api-key", "apiKey"],
    ["custom-header", "headerValue"],
    ["x-api-key-secret", "apiKey"],
    ["x-api-key-secret", "apiSecret"],
    ["query-param", "paramValue"],
    ["json-body-field", "fieldValue"],
  ] as const)("%s %s is a one-line value: every control character but TAB refused, and line separators", (method, field) => {
    for (const bad of ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u0000b", "a\u0001", "a\u007f", "a\u0085", "a\u2028", "a\u2029"]) {
      expect(issueOf(method, field, bad)?.message, JSON.stringify(bad)).toMatch(/control characters/);
    }
    expect(issueOf(method, field, "sk_live_\t ok")).toBeUndefined();
  });

  it.each([
    ["query-param", "paramName"],
    ["json-body-field", "fieldName"],
  ] as const)("%s %s is a field name: & = # ? and controls refused", (method, field) => {
    for (const bad of ["a&b", "a=b", "a#b", "a?b", "a b", "a\u0000"]) expect(issueOf(method, field, bad), bad).toBeDefined();
    expect(issueOf(method, field, "api_key")).toBeUndefined();
  });

  it("paramValue and fieldValue are encoded where they go: any one-line text", () => {
    expect(authConfigIssues("query-param", { paramName: "k", paramValue: "a&b=c#d ?é" })).toEqual([]);
    expect(authConfigIssues("json-body-field", { fieldName: "k", fieldValue: 'line "1"\t{}' })).toEqual([]);
  });
});
