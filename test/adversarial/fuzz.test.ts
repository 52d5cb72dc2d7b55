// Schema-driven fuzzing of every operation in /openapi.json (issue "adversarial test suite", part 3).
//
// For each operation of the served document:
//  - valid requests: bodies, query strings and path ids generated from the operation's schemas (test/support/
//    openapi-arbitraries.ts), then made business-valid by a per-operation fixup (each rule the schema cannot express is
//    written next to its fixup below). They must get the documented success status, a body that validates against the
//    documented response schema (undocumented properties count as failures), and the data sent back (round trip, and
//    read back with a GET where there is one).
//  - mutated requests: every schema-derived mutation of a valid body (test/support/openapi-mutations.ts), random
//    mutations of random valid bodies, malformed JSON, wrong content types, bodies over the 100 KiB limit with and without
//    Content-Length, query-string and path mutations, no key. A request whose parsed body breaks the documented schema
//    must be `400 VALIDATION_ERROR`; any other request may succeed (then it is checked like a valid one) or get a
//    documented 4xx.
//  - oracles for every request: never a 5xx; the status is documented for the operation; the body validates against the
//    documented schema of that status (errors: exactly `{error, code, details?, meta}`, code and status from one table,
//    `meta.requestId` = `X-Request-Id`); a refused write leaves the tenant's services and paywalls rows byte-identical.
//
// The drivers (transport, oracles, generation, fixups, fixtures) live in test/support/fuzz-driver.ts.
//
// Sizes: FUZZ_RUNS runs per property (default 30; see test/support/fuzz-env.ts for how to pass it). Prints one line,
// `fuzz: N requests`.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  Actor,
  countKind,
  currentWriter,
  DRIVERS,
  describeExchange,
  doc,
  entry,
  exchange,
  expectRefused,
  OPERATION_IDS,
  ops,
  type Req,
  RUNS,
  reader,
  requestArbitrary,
  send,
  snapshot,
  stranger,
  strangerIds,
  successStatus,
  TIMEOUT,
  useFuzzSuite,
  wellFormedFailures,
  withAnchors,
} from "../support/fuzz-driver.ts";
import { fcParams } from "../support/fuzz-env.ts";
import { arbitraryFromSchema, resolveSchema, type Schema } from "../support/openapi-arbitraries.ts";

useFuzzSuite();

// ---------------------------------------------------------------------------------------------------------------

describe("schema-driven fuzzing of /openapi.json", () => {
  it("has a driver for every operation of the document, and the document for every driver", () => {
    expect([...ops.keys()].sort()).toEqual([...OPERATION_IDS].sort());
  });

  describe("valid requests generated from the schemas succeed and match the documented response", () => {
    it.each(OPERATION_IDS)(
      "%s",
      async (id) => {
        const e = entry(id);
        await fc.assert(
          fc.asyncProperty(requestArbitrary(e), async (g) => {
            const prepared = await DRIVERS[id]!.build(g);
            const ans = await exchange(e, prepared);
            countKind("valid");
            expect(ans.status, describeExchange(prepared.req, ans)).toBe(successStatus(e.op));
            await wellFormedFailures(() => prepared.verify?.(ans, prepared.body));
          }),
          fcParams(RUNS),
        );
      },
      TIMEOUT,
    );
  });

  const BY_ID_OPS = OPERATION_IDS.filter((id) => id.endsWith("/{id}"));

  describe("path ids: unknown, malformed, oversized, another tenant's", () => {
    const strangerId = (id: string) => {
      const kind = id.split("/")[2] as keyof typeof strangerIds;
      return strangerIds[kind][0] as string;
    };

    it.each(BY_ID_OPS)(
      "%s",
      async (id) => {
        const e = entry(id);
        const method = e.method;
        const base = e.path.replace("/{id}", "");
        const write = method !== "GET";
        const variant = async (raw: string, expected: number[]) => {
          countKind("path");
          const req: Req = { method, path: `${base}/${raw}`, ...(method === "PATCH" ? { text: "{}" } : {}) };
          const ans = await exchange(e, { actor: write ? await currentWriter() : reader, req }, req);
          expect(expected, describeExchange(req, ans)).toContain(ans.status);
        };
        // One character over the path schema's maxLength (64 for the platform's ids; a channel's on-chain id is 66).
        const idSchema = (e.op.parameters ?? []).find((p) => p.in === "path")?.schema as Schema;
        const over = ((idSchema as { maxLength?: number }).maxLength ?? 64) + 1;
        await variant("x".repeat(over), [400]);
        await variant(encodeURIComponent("é".repeat(over)), [400]);
        for (const raw of [
          "does_not_exist",
          "%F0%9F%98%80",
          "%E0%A4%A",
          "%00",
          "'%20OR%20'1'='1",
          "..%2F..%2Fetc",
          "a%2Fb",
          "%20",
          "null",
          "undefined",
          "__proto__",
          "constructor",
        ]) {
          await variant(raw, [404]);
        }
        const other = strangerId(id);
        const req: Req = { method, path: `${base}/${other}`, ...(method === "PATCH" ? { text: "{}" } : {}) };
        countKind("path");
        const before = await snapshot(stranger.tenant.id);
        // Webhook endpoints and channels answer another tenant's as unknown (404); other resources say FORBIDDEN.
        const hides = base.startsWith("/v1/webhook-endpoints") || base.startsWith("/v1/channels");
        const [status, code] = hides ? [404, "NOT_FOUND"] : [403, "FORBIDDEN"];
        expectRefused(req, await exchange(e, { actor: write ? await currentWriter() : reader, req }, req), status, code);
        expect(await snapshot(stranger.tenant.id)).toBe(before);

        // Ids generated from the path schema (1-64 characters of anything): never found, never a 5xx.
        await fc.assert(
          fc.asyncProperty(arbitraryFromSchema(doc, idSchema, { maxStringLength: 64 }) as fc.Arbitrary<string>, async (raw) => {
            await variant(encodeURIComponent(raw), [404]);
          }),
          fcParams(Math.max(5, Math.floor(RUNS / 3))),
        );
      },
      TIMEOUT,
    );
  });

  describe("without a key", () => {
    it.each(OPERATION_IDS.filter((id) => id !== "GET /v1/health"))(
      "%s → 401 INVALID_API_KEY",
      async (id) => {
        const e = entry(id);
        const req: Req = { method: e.method, path: e.path.replace("{id}", "x"), ...(e.op.requestBody ? { text: "{}" } : {}) };
        countKind("no-key");
        expectRefused(req, await exchange(e, { actor: null, req }, req), 401, "INVALID_API_KEY");
      },
      TIMEOUT,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Deviations the fuzzer found (now fixed in src): each test pins the correct behavior with the input that exposed it.

describe("deviations the fuzzer found", () => {
  const serviceText = (extra: string) =>
    `{"name":"n","baseUrl":"https://api.example.com","authMethod":"none","networks":["base"],"mode":"mainnet"${extra}}`;

  it("a lone surrogate in a text field is refused, or stored unchanged", async () => {
    const actor = await Actor.create();
    const ans = await send(actor, {
      method: "POST",
      path: "/v1/services",
      text: '{"name":"a\\ud800b","baseUrl":"https://api.example.com","authMethod":"none","networks":["base"],"mode":"mainnet"}',
    });
    expect(
      ans.status === 400 || (ans.status === 201 && ans.body.data.name === "a\ud800b"),
      describeExchange({ method: "POST", path: "" }, ans),
    ).toBe(true);
  });

  it("a 10,000-deep cacheRules object is refused with 400, stores nothing, and breaks no read", async () => {
    const actor = await withAnchors(await Actor.create());
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    const text = `{"slug":"deep","name":"n","targetType":"ROUTE","targetRoute":"/x","serviceId":"${actor.anchor.mainnet}","price":"1","currency":"USDC","networks":["base"],"fulfillmentMode":"PROXY","cacheRules":${deep}}`;
    const before = await snapshot(actor.tenant.id);
    const ans = await send(actor, { method: "POST", path: "/v1/paywalls", text });
    // Today: 500 INTERNAL_ERROR (RangeError: Maximum call stack size exceeded in c.json, src/api/routes/paywalls/handlers.ts
    // createPaywall) after the row was inserted; from then on GET /v1/paywalls, GET /v1/services and
    // GET /v1/services/{id} of this tenant answer 500 too, and a retry is 409 CONFLICT.
    const reads = await Promise.all(
      ["/v1/paywalls", "/v1/services", `/v1/services/${actor.anchor.mainnet}`].map((path) =>
        send(actor, { method: "GET", path }),
      ),
    );
    expect({
      status: ans.status,
      stored: (await snapshot(actor.tenant.id)) === before,
      reads: reads.map((r) => r.status),
    }).toEqual({
      status: 400,
      stored: true,
      reads: [200, 200, 200],
    });
  });

  it("a __proto__ key in authConfig is refused like any unknown field", async () => {
    const ans = await send(await Actor.create(), {
      method: "POST",
      path: "/v1/services",
      text: serviceText(',"authConfig":{"__proto__":"x"}'),
    });
    expectRefused({ method: "POST", path: "/v1/services" }, ans, 400);
  });

  it("a __proto__ key in cacheRules is kept or refused, never dropped", async () => {
    const text =
      '{"slug":"p","name":"n","targetType":"PROXY","targetUrl":"https://api.example.com/x","price":"1","currency":"USDC","networks":["base"],"fulfillmentMode":"PROXY","cacheRules":{"__proto__":{"ttl":1},"b":2}}';
    const ans = await send(await Actor.create(), { method: "POST", path: "/v1/paywalls", text });
    expect(
      ans.status === 400 || (ans.status === 201 && JSON.stringify(ans.body.data.cacheRules) === '{"__proto__":{"ttl":1},"b":2}'),
      ans.text,
    ).toBe(true);
  });

  it("a DELETE ignores a body it does not read: only statuses its operation documents", async () => {
    const e = entry("DELETE /v1/services/{id}");
    const ans = await send(await Actor.create(), {
      method: "DELETE",
      path: "/v1/services/x",
      text: "x".repeat(200 * 1024),
      contentType: "text/plain",
    });
    expect(ans.status).toBe(404);
    expect(Object.keys(e.op.responses)).toContain(String(ans.status));
  });

  it("the document states the rules the fixups had to add: canonical price, networks without repeats, offset not nullable", () => {
    const create = doc.components.schemas.PaywallCreate as Schema & { properties: Record<string, Schema> };
    const offset = entry("GET /v1/services").op.parameters?.find((p) => p.name === "offset")?.schema;
    expect({
      pricePattern: create.properties.price?.pattern,
      uniqueNetworks: resolveSchema(doc, create.properties.networks as Schema).uniqueItems,
      offsetType: offset?.type,
    }).toEqual({ pricePattern: expect.any(String), uniqueNetworks: true, offsetType: "integer" });
  });
});
