// Discovery through the management API and on the payment origin (docs/discovery.md): the paywall fields validated
// on write, each service's discovery URLs, the preview with its diagnostics, and the files the payment origin serves
// (and the API origin does not).
import { describe, expect, it } from "vitest";
import { api, send } from "../support/client.ts";
import {
  actor,
  createPaywall,
  createService,
  expectError,
  expectInvalid,
  routePaywallBody,
  storedPaywall,
} from "../support/resources.ts";

const PAY = "https://pay.example.com";
const pay = (path: string, init?: RequestInit) => send(new Request(`${PAY}${path}`, init));

const INPUT = { type: "object", properties: { city: { type: "string", examples: ["Lisbon"] } }, required: ["city"] };
const OUTPUT = { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] };

describe("paywall discovery fields", () => {
  it("are stored and returned as sent, and cleared with null", async () => {
    const who = await actor();
    const svc = await createService(who);
    const pw = await createPaywall(
      who,
      routePaywallBody(svc.id, { inputSchema: INPUT, outputSchema: OUTPUT, outputExample: { tempC: 2 } }),
    );
    expect(pw).toMatchObject({ inputSchema: INPUT, outputSchema: OUTPUT, outputExample: { tempC: 2 } });
    const cleared = await api(`/v1/paywalls/${pw.id}`, {
      key: who.key,
      method: "PATCH",
      body: { inputSchema: null, outputExample: null },
    });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.data).toMatchObject({ inputSchema: null, outputSchema: OUTPUT, outputExample: null });
  });

  it.each([
    ["a $ref", { inputSchema: { type: "object", properties: { a: { $ref: "#/x" } } } }, "inputSchema.properties.a.$ref"],
    ["an input that is not an object", { inputSchema: { type: "array" } }, "inputSchema.type"],
    ["an output that is a string", { outputSchema: { type: "string" } }, "outputSchema.type"],
    ["an example that is a string", { outputExample: "hot" }, "outputExample"],
    ["an example that breaks the schema", { outputSchema: OUTPUT, outputExample: { tempC: "hot" } }, "outputExample"],
    [
      "a schema over 4096 characters",
      {
        inputSchema: {
          type: "object",
          description: "d".repeat(900),
          title: "t".repeat(200),
          properties: Object.fromEntries(
            Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: "string", description: "x".repeat(80) }]),
          ),
        },
      },
      "inputSchema",
    ],
  ])("refuse %s on create with 400 naming it", async (_, fields, path) => {
    const who = await actor();
    const svc = await createService(who);
    expectInvalid(await api("/v1/paywalls", { key: who.key, method: "POST", body: routePaywallBody(svc.id, fields) }), path);
  });

  it("an update is judged with what is stored: a new schema the stored example breaks is refused, nothing changed", async () => {
    const who = await actor();
    const svc = await createService(who);
    const pw = await createPaywall(who, routePaywallBody(svc.id, { outputExample: { tempC: "warm" } }));
    expectInvalid(
      await api(`/v1/paywalls/${pw.id}`, { key: who.key, method: "PATCH", body: { outputSchema: OUTPUT } }),
      "outputExample",
    );
    expect((await storedPaywall(pw.id))?.outputSchema).toBeNull();
  });
});

describe("a service's discovery URLs", () => {
  it("are on the payment origin in the service, its list and its paywall's service; docsLlms replaces the llms.txt", async () => {
    const who = await actor();
    const svc = await createService(who);
    const expected = {
      openapiUrl: `${PAY}/api/discovery/${svc.id}/openapi.json`,
      llmsTxtUrl: `${PAY}/api/discovery/${svc.id}/llms.txt`,
      mcpUrl: `${PAY}/api/mcp/${svc.id}`,
    };
    expect(svc.discovery).toEqual(expected);
    expect((await api(`/v1/services/${svc.id}`, { key: who.key })).body.data.discovery).toEqual(expected);
    expect((await api("/v1/services", { key: who.key })).body.data[0].discovery).toEqual(expected);
    const patched = await api(`/v1/services/${svc.id}`, {
      key: who.key,
      method: "PATCH",
      body: { docsLlms: "https://docs.example.com/llms.txt" },
    });
    expect(patched.body.data.discovery).toEqual({ ...expected, llmsTxtUrl: "https://docs.example.com/llms.txt" });
  });
});

describe("GET /v1/services/{id}/discovery", () => {
  it("is the document the payment origin serves now, with diagnostics and listings", async () => {
    const who = await actor();
    const svc = await createService(who, { xGuidance: null });
    const pw = await createPaywall(who, routePaywallBody(svc.id));
    const res = await api(`/v1/services/${svc.id}/discovery`, { key: who.key });
    expect(res.status, res.text).toBe(200);
    const served = (await (await pay(`/api/discovery/${svc.id}/openapi.json`)).json()) as { paths: object };
    expect(res.body.data).toEqual({
      serviceId: svc.id,
      openapiUrl: svc.discovery.openapiUrl,
      llmsTxtUrl: svc.discovery.llmsTxtUrl,
      mcpUrl: svc.discovery.mcpUrl,
      document: served,
      diagnostics: expect.arrayContaining([
        { severity: "warn", code: "INPUT_SCHEMA_MISSING", message: expect.stringContaining(pw.slug), paywallId: pw.id },
        { severity: "info", code: "GUIDANCE_MISSING", message: expect.any(String) },
      ]),
      listings: [],
    });
    expect(Object.keys(served.paths)).toEqual([new URL(pw.paymentUrls.x402 as string).pathname]);
  });

  it("warns when the service sends a credential over plain http://, and only then", async () => {
    const who = await actor();
    const diagnostics = async (overrides: Record<string, unknown>) => {
      const svc = await createService(who, overrides);
      const res = await api(`/v1/services/${svc.id}/discovery`, { key: who.key });
      expect(res.status, res.text).toBe(200);
      return (res.body.data.diagnostics as { code: string; severity: string; message: string }[]).filter(
        (d) => d.code === "CREDENTIALS_OVER_HTTP",
      );
    };
    const bearer = { authMethod: "bearer", authConfig: { bearerToken: "t0ken-value" } };
    expect(await diagnostics({ ...bearer, baseUrl: "http://api.example.com" })).toEqual([
      { severity: "warn", code: "CREDENTIALS_OVER_HTTP", message: expect.stringMatching(/bearer credential .*http:\/\//) },
    ]);
    expect(await diagnostics({ ...bearer, baseUrl: "https://api.example.com" })).toEqual([]);
    expect(await diagnostics({ authMethod: "none", authConfig: {}, baseUrl: "http://api.example.com" })).toEqual([]);
  });

  it("is the tenant's own: 404 for an unknown service, 403 for another tenant's", async () => {
    const [who, other] = [await actor(), await actor()];
    const svc = await createService(other);
    expectError(await api("/v1/services/svc_000000000000000000000000/discovery", { key: who.key }), 404, "NOT_FOUND");
    expectError(await api(`/v1/services/${svc.id}/discovery`, { key: who.key }), 403, "FORBIDDEN");
  });
});

describe("the payment origin's discovery files", () => {
  it("a service's document and llms.txt: JSON and plain text, never cached, readable from any origin", async () => {
    const who = await actor();
    const svc = await createService(who);
    const doc = await pay(`/api/discovery/${svc.id}/openapi.json`);
    expect(doc.status).toBe(200);
    expect(doc.headers.get("content-type")).toMatch(/^application\/json/);
    expect(doc.headers.get("cache-control")).toBe("no-store");
    expect(doc.headers.get("access-control-allow-origin")).toBe("*");
    expect(await doc.json()).toMatchObject({ openapi: "3.1.0", info: { title: svc.name }, servers: [{ url: PAY }] });
    const llms = await pay(`/api/discovery/${svc.id}/llms.txt`);
    expect(llms.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await llms.text()).toMatch(new RegExp(`^# ${svc.name}\n`));
    const unknown = await pay("/api/discovery/svc_000000000000000000000000/openapi.json");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: "NOT_FOUND" });
  });

  it("the root catalogue, llms.txt and favicon are the payment origin's; the API origin keeps its own document", async () => {
    const root = (await (await pay("/openapi.json")).json()) as { info: { title: string } };
    expect(root.info.title).toBe("Paid APIs at pay.example.com");
    expect((await (await pay("/llms.txt")).text()).startsWith("# Paid APIs at pay.example.com\n")).toBe(true);
    for (const method of ["GET", "HEAD"]) {
      const icon = await pay("/favicon.ico", { method });
      expect(icon.status).toBe(200);
      expect(icon.headers.get("content-type")).toBe("image/x-icon");
      // An ICO container (reserved 0, type 1, one image) holding a PNG: the icon's bytes, decoded once.
      if (method === "GET") expect([...new Uint8Array(await icon.arrayBuffer())].slice(0, 6)).toEqual([0, 0, 1, 0, 1, 0]);
    }
    expect((await api("/openapi.json")).body.info.title).toBe("Paywall Management API");
    const who = await actor();
    const svc = await createService(who);
    expect((await api(`/api/discovery/${svc.id}/openapi.json`)).status).toBe(404);
    expect((await api("/llms.txt")).status).toBe(404);
  });
});
