// The discovery documents of the production bundle, judged by the ecosystem's own validator: @agentcash/discovery
// (its CLI on the payment origin's root catalogue, its API on a service's own document, both probing every paid
// route live) finds every paid route and reports no error; each probed 402 agrees with the document (amount,
// network, asset, payTo), which the validator itself does not compare; ajv (which cannot run in the Worker) holds
// the Bazaar extensions and the paywalls' schemas to JSON Schema 2020-12. See docs/discovery.md.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import {
  type AuditWarning,
  attachProbePayload,
  checkEndpointSchema,
  checkL2ForOpenAPI,
  checkL4ForOpenAPI,
  discoverOriginSchema,
  type EndpointMethodAdvisory,
  getL3ForOpenAPI,
  getOpenAPI,
  getWarningsForFavicon,
  getWarningsForL2,
  getWarningsForL3,
  getWarningsForL4,
  getWarningsForOpenAPI,
  type HttpMethod,
  isOpenApiParseFailure,
  type MppPaymentOption,
  type OpenApiSource,
  type X402V2PaymentOption,
} from "@agentcash/discovery";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { validateDiscoveryExtension } from "@x402/extensions/bazaar";
import Ajv2020 from "ajv/dist/2020.js";
import { parseUnits } from "viem/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NETWORK_TABLE } from "../../src/core/money/network-table.ts";
import { ROOT, type RunningWorker, startWorker } from "../browser/support/worker.ts";

const PORT = 8893;

let worker: RunningWorker;
let service: { id: string; discovery: { openapiUrl: string; llmsTxtUrl: string } };
let merchant: string;
const paywalls: Record<string, { id: string; paymentUrls: { x402: string; mpp: string | null } }> = {};

const FORECAST = {
  slug: "forecast",
  name: "Forecast",
  description: "The next 24 hours for one city.",
  targetType: "ROUTE",
  targetRoute: "/v1/forecast",
  price: "10000",
  currency: "USDC",
  networks: ["base-sepolia", "tempo-testnet"],
  allowedMethods: ["GET"],
  fulfillmentMode: "PROXY",
  inputSchema: {
    type: "object",
    properties: {
      city: { type: "string", description: "City name", examples: ["Lisbon"] },
      days: { type: "integer", minimum: 1, maximum: 7 },
    },
    required: ["city"],
  },
  outputSchema: {
    type: "object",
    properties: { city: { type: "string" }, tempC: { type: "number" }, conditions: { type: "string" } },
    required: ["city", "tempC"],
  },
  outputExample: { city: "Lisbon", tempC: 21.5, conditions: "clear" },
};
const SUMMARIZE = {
  slug: "summarize",
  name: "Summarize",
  targetType: "ROUTE",
  targetRoute: "/v1/summarize",
  price: "250000",
  currency: "USDC",
  networks: ["base-sepolia"],
  allowedMethods: ["POST"],
  fulfillmentMode: "PROXY",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", minLength: 1 }, maxWords: { type: "integer", default: 50 } },
    required: ["text"],
  },
};

const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await fetch(`${worker.url}${path}`, {
    method: init.method ?? "GET",
    headers: { Authorization: `Bearer ${worker.key}`, "Content-Type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body = (await res.json()) as { data: Record<string, unknown> };
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${JSON.stringify(body)}`);
  return body.data;
};

beforeAll(async () => {
  // The validator and these checks fetch the documents many times from one address: no per-address limit here.
  worker = await startWorker({ port: PORT, vars: { IP_RATE_LIMIT_MAX: "1000000" } });
  service = (await api("/v1/services", {
    method: "POST",
    body: {
      name: "Weather Pro",
      description: "Hyper-local weather forecasts and text summaries, paid per call in USDC.",
      baseUrl: "https://api.weather.example.com",
      authMethod: "none",
      networks: ["base-sepolia", "tempo-testnet"],
      mode: "testnet",
      contactEmail: "ops@weather.example",
      categories: ["weather", "data"],
      docsHomepage: "https://weather.example/docs",
      xGuidance: "GET forecast takes ?city=<name>; POST summarize takes {text}. /status is free; /me needs a wallet sign-in.",
      publicRoutes: ["/status"],
      siwxRoutes: ["/me"],
    },
  })) as typeof service;
  for (const body of [FORECAST, SUMMARIZE, { ...SUMMARIZE, slug: "retired", name: "Retired", enabled: false }]) {
    const created = await api("/v1/paywalls", { method: "POST", body: { ...body, serviceId: service.id } });
    paywalls[body.slug] = created as (typeof paywalls)[string];
    merchant = created.merchantWallet as string;
  }
}, 240_000);

afterAll(async () => {
  await worker?.stop();
});

interface Diagnostic extends AuditWarning {
  where: string;
}

/** What `discovery discover` does, on any document URL (its CLI reads only the origin's root document). */
async function validate(documentUrl: string) {
  const origin = new URL(documentUrl).origin;
  const diagnostics: Diagnostic[] = [];
  const at = (where: string) => (w: AuditWarning) => ({ ...w, where });
  const raw = await getOpenAPI(origin, {}, undefined, documentUrl);
  const source = raw.isOk() ? raw.value : null;
  diagnostics.push(...getWarningsForOpenAPI(source).map(at("document")));
  const favicon = await getWarningsForFavicon(origin);
  if (favicon.isOk()) diagnostics.push(...favicon.value.map(at("origin")));
  if (!source || isOpenApiParseFailure(source)) throw new Error(`no document at ${documentUrl}`);
  const openApi = source as OpenApiSource;
  const l2 = checkL2ForOpenAPI(openApi);
  diagnostics.push(...getWarningsForL2(l2).map(at("L2")), ...getWarningsForL4(checkL4ForOpenAPI(openApi)).map(at("L4")));
  for (const route of l2.routes) {
    const l3 = getL3ForOpenAPI(openApi, route.path, route.method);
    const advisory = { method: route.method, ...l3 } as EndpointMethodAdvisory;
    // Paid routes get their live 402 attached (all methods probed, the x402 answer of the route's method kept).
    if (l3 && (l3.authMode === "paid" || l3.authMode === "apiKey+paid"))
      await attachProbePayload(`${origin}${route.path}`, [advisory]);
    diagnostics.push(...getWarningsForL3(l3 ? advisory : null).map(at(`${route.method} ${route.path}`)));
  }
  return { openApi, routes: l2.routes, diagnostics };
}

/** Every live 402 of a paid route (the API's probe, as x402scan registers routes), checked against the document. */
async function probeAgreement(openApi: OpenApiSource, path: string, method: HttpMethod) {
  const origin = new URL(worker.paymentUrl).origin;
  const probed = await checkEndpointSchema({ url: `${origin}${path}`, probe: true });
  if (!probed.found) throw new Error(`probe found no 402 at ${path}`);
  const advisory = probed.advisories.find((a) => a.method === method);
  const warnings = advisory ? getWarningsForL3(advisory) : [];
  const info = (openApi.raw.paths as Record<string, Record<string, Record<string, never>>>)[path]?.[method.toLowerCase()]?.[
    "x-payment-info"
  ] as unknown as {
    price: { amount: string; currency: string };
    protocols: Record<string, { networks?: string[]; payTo?: string }>[];
    offers?: { amount: string; currency: string; recipient: string }[];
  };
  const options = (advisory?.paymentOptions ?? []) as (X402V2PaymentOption | MppPaymentOption)[];
  return { warnings, info, options };
}

describe("a service's discovery document, by @agentcash/discovery", () => {
  it("lists every enabled paid route, free and SIWX routes, and no disabled one, with no error-level diagnostic", async () => {
    const { routes, diagnostics } = await validate(service.discovery.openapiUrl);
    const listed = routes.map((r) =>
      `${r.method} ${r.path} ${r.authMode} ${r.price ?? ""} ${(r.protocols ?? []).join("+")}`.trim(),
    );
    const x402 = (slug: string) => new URL(paywalls[slug]?.paymentUrls.x402 as string).pathname;
    const mpp = new URL(paywalls.forecast?.paymentUrls.mpp as string).pathname;
    expect(listed.sort()).toEqual(
      [
        `GET ${x402("forecast")} paid 0.01 USD x402`,
        `GET ${mpp} paid 0.01 USD mpp`,
        `POST ${x402("summarize")} paid 0.25 USD x402`,
        `GET /api/public/${service.id}/status unprotected`,
        `GET /api/siwx/${service.id}/me siwx`,
      ].sort(),
    );
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    // What is left is known and harmless: a local origin has no contact page to scrape, etc. Nothing unexpected.
    expect(diagnostics.filter((d) => d.severity === "warn")).toEqual([]);
  });

  it("every probed 402 agrees with the document: amount, network, asset and payTo", async () => {
    const { openApi, routes } = await validate(service.discovery.openapiUrl);
    const paid = routes.filter((r) => r.authMode === "paid");
    expect(paid).toHaveLength(3);
    for (const route of paid) {
      const { warnings, info, options } = await probeAgreement(openApi, route.path, route.method);
      expect(
        warnings.filter((w) => w.severity === "error"),
        route.path,
      ).toEqual([]);
      expect(options.length, route.path).toBeGreaterThan(0);
      expect(info.price.currency).toBe("USD");
      const atomic = parseUnits(info.price.amount, 6).toString();
      for (const option of options) {
        expect(option.amount, `${route.method} ${route.path}`).toBe(atomic);
        if (option.protocol === "x402") {
          const [declared] = info.protocols.map((p) => p.x402).filter(Boolean);
          expect(declared?.networks).toContain(option.network);
          expect(option.asset).toBe(NETWORK_TABLE["base-sepolia"].asset);
          expect(option.payTo).toBe(declared?.payTo);
          expect(option.payTo?.toLowerCase()).toBe(merchant.toLowerCase());
        } else {
          expect(option.network).toBe(`tempo:${NETWORK_TABLE["tempo-testnet"].chainId}`);
          expect(info.offers).toContainEqual(
            expect.objectContaining({ amount: option.amount, currency: option.asset, recipient: option.payTo }),
          );
        }
      }
      // One payee per route.
      expect(new Set(options.map((o) => o.payTo?.toLowerCase())).size).toBe(1);
    }
  });

  it("the CLI on the payment origin reads the root catalogue: every paid route, probed, and no error", () => {
    const cli = spawnSync(
      process.execPath,
      [join(ROOT, "node_modules/@agentcash/discovery/bin/discovery.js"), "discover", worker.paymentUrl, "--json"],
      { encoding: "utf8", timeout: 60_000 },
    );
    const report = JSON.parse(cli.stdout) as {
      ok: boolean;
      resources: { resourceUrl?: string; url?: string }[];
      warnings: AuditWarning[];
    };
    expect(report.ok).toBe(true);
    const urls = JSON.stringify(report.resources);
    for (const slug of ["forecast", "summarize"])
      expect(urls).toContain(new URL(paywalls[slug]?.paymentUrls.x402 as string).pathname);
    expect(urls).not.toContain("retired");
    expect(report.warnings.filter((w) => w.severity === "error")).toEqual([]);
    expect(report.warnings.map((w) => w.code)).not.toContain("FAVICON_MISSING");
  });

  it("the root catalogue is what x402scan reads: the same paid routes, found by its discovery call", async () => {
    const found = await discoverOriginSchema({ target: worker.paymentUrl });
    expect(found.found).toBe(true);
    const endpoints = found.found ? found.endpoints.map((e) => `${e.method} ${e.path}`) : [];
    for (const slug of ["forecast", "summarize"]) {
      expect(endpoints.some((e) => e.endsWith(new URL(paywalls[slug]?.paymentUrls.x402 as string).pathname))).toBe(true);
    }
    expect(endpoints.join()).not.toContain("retired");
  });
});

describe("a GET paywall without a configured schema", () => {
  it("The discovery validator reports no warning for a GET paywall without a configured schema", async () => {
    const plain = (await api("/v1/services", {
      method: "POST",
      body: {
        name: "Plain",
        baseUrl: "https://plain.example.com",
        authMethod: "none",
        networks: ["base-sepolia"],
        mode: "testnet",
      },
    })) as typeof service;
    const created = await api("/v1/paywalls", {
      method: "POST",
      body: {
        slug: "quote",
        name: "Quote",
        targetType: "ROUTE",
        targetRoute: "/quote",
        serviceId: plain.id,
        price: "1500",
        currency: "USDC",
        networks: ["base-sepolia"],
        allowedMethods: ["GET"],
        fulfillmentMode: "PROXY",
      },
    });
    expect(created.inputSchema).toBeNull();
    const { routes, diagnostics } = await validate(plain.discovery.openapiUrl);
    expect(routes.map((r) => `${r.method} ${r.authMode}`)).toEqual(["GET paid"]);
    expect(diagnostics.filter((d) => d.severity !== "info")).toEqual([]);
  });
});

describe("schemas, held to JSON Schema 2020-12 by ajv", () => {
  it("every 402's Bazaar extension validates against its own schema, as a facilitator checks it before listing", async () => {
    for (const [slug, method] of [
      ["forecast", "GET"],
      ["summarize", "POST"],
    ] as const) {
      const res = await fetch(paywalls[slug]?.paymentUrls.x402 as string, { method });
      expect(res.status).toBe(402);
      const required = decodePaymentRequiredHeader(res.headers.get("PAYMENT-REQUIRED") as string);
      const bazaar = required.extensions?.bazaar as Parameters<typeof validateDiscoveryExtension>[0];
      expect(validateDiscoveryExtension(bazaar), slug).toEqual({ valid: true });
      expect(bazaar.info.output?.example).toBeDefined();
    }
  });

  it("the paywalls' schemas are valid 2020-12 schemas, the examples satisfy them, and so do the document's", async () => {
    const ajv = new Ajv2020({ strict: false });
    for (const schema of [FORECAST.inputSchema, FORECAST.outputSchema, SUMMARIZE.inputSchema]) {
      expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
    }
    expect(ajv.validate(FORECAST.outputSchema, FORECAST.outputExample)).toBe(true);
    const doc = (await (await fetch(service.discovery.openapiUrl)).json()) as {
      paths: Record<string, Record<string, { parameters?: { schema: object }[]; requestBody?: unknown; responses: never }>>;
    };
    const forecast = doc.paths[new URL(paywalls.forecast?.paymentUrls.x402 as string).pathname]?.get;
    for (const p of forecast?.parameters ?? []) expect(ajv.validateSchema(p.schema)).toBe(true);
    expect(forecast).toBeDefined();
    const ok = (
      (forecast as NonNullable<typeof forecast>).responses as unknown as Record<
        string,
        { content: Record<string, { schema: object; example: unknown }> }
      >
    )["200"]?.content["application/json"];
    expect(ajv.validate(ok?.schema as object, ok?.example)).toBe(true);
  });
});

describe("llms.txt", () => {
  it("the service's lists both paid routes with their prices and networks, how to pay, and its other routes", async () => {
    const res = await fetch(service.discovery.llmsTxtUrl);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^# Weather Pro\n\n> Hyper-local/);
    expect(text).toContain(`(${paywalls.forecast?.paymentUrls.x402}): 0.01 USD per call, USDC on base-sepolia.`);
    expect(text).toContain(`(${paywalls.forecast?.paymentUrls.mpp}): 0.01 USD per call, pathUSD on tempo-testnet.`);
    expect(text).toContain(`(${paywalls.summarize?.paymentUrls.x402}): 0.25 USD per call, USDC on base-sepolia.`);
    expect(text).toMatch(/PAYMENT-SIGNATURE[\s\S]*Authorization: Payment/);
    expect(text).toContain(`/api/public/${service.id}/status`);
    expect(text).toContain(`/api/siwx/${service.id}/me`);
    expect(text).not.toContain("retired");
  });

  it("the root one lists the service with its own files", async () => {
    const text = await (await fetch(`${worker.paymentUrl}/llms.txt`)).text();
    expect(text).toContain(
      `- [Weather Pro](${service.discovery.llmsTxtUrl}): 2 paid routes; OpenAPI: ${service.discovery.openapiUrl}.`,
    );
  });
});

describe("a price change", () => {
  it("changes the document and the 402 together", async () => {
    const path = new URL(paywalls.summarize?.paymentUrls.x402 as string).pathname;
    await api(`/v1/paywalls/${paywalls.summarize?.id}`, { method: "PATCH", body: { price: "1230000" } });
    const { openApi } = await validate(service.discovery.openapiUrl);
    const { info, options } = await probeAgreement(openApi, path, "POST");
    expect(info.price.amount).toBe("1.23");
    expect(options.map((o) => o.amount)).toEqual(["1230000"]);
    await api(`/v1/paywalls/${paywalls.summarize?.id}`, { method: "PATCH", body: { price: SUMMARIZE.price } });
  });
});
