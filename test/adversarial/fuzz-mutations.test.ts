// Schema-driven fuzzing, second half: mutated bodies, malformed and oversized bodies, query-string mutations (the
// valid requests, path ids and requests without a key are in fuzz.test.ts; the two files run side by side).
//
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
  countKind,
  DRIVERS,
  describeExchange,
  doc,
  entry,
  exchange,
  expectRefused,
  GEN_OPTIONS,
  type Generated,
  MAX_BODY_BYTES,
  type OpEntry,
  onePerGroup,
  pick,
  RUNS,
  reader,
  requestArbitrary,
  TIMEOUT,
  thorough,
  tryBody,
  useFuzzSuite,
} from "../support/fuzz-driver.ts";
import { fcParams } from "../support/fuzz-env.ts";
import { requestSchema, resolveSchema, type Schema } from "../support/openapi-arbitraries.ts";
import { type BodyMutation, bodyMutations, MALFORMED_BODIES } from "../support/openapi-mutations.ts";

useFuzzSuite();

// ---------------------------------------------------------------------------------------------------------------

describe("schema-driven fuzzing of /openapi.json: mutations", () => {
  const BODY_OPS = ["POST /v1/services", "PATCH /v1/services/{id}", "POST /v1/paywalls", "PATCH /v1/paywalls/{id}"];

  describe("every schema-derived mutation of a valid body: 400 when it breaks the schema, never a 5xx", () => {
    it.each(BODY_OPS)(
      "%s",
      async (id) => {
        const e = entry(id);
        const full = requestArbitrary(e, { ...GEN_OPTIONS, full: true });
        const [g] = fc.sample(full, { numRuns: 1, seed: 42 }) as [Generated];
        let prepared = await DRIVERS[id]!.build(g);
        const mutations = bodyMutations(doc, requestSchema(e.op) as Schema, prepared.body);
        expect(mutations.length).toBeGreaterThan(50);
        for (const m of thorough ? mutations : onePerGroup(mutations)) {
          const ans = await tryBody(e, prepared, m.render(prepared.body), m.kind);
          // An accepted mutation took its slug or changed the resource: the next one starts from a fresh base of the same shape.
          if (ans.status < 300) prepared = await DRIVERS[id]!.build(g);
        }
      },
      TIMEOUT,
    );
  });

  describe("random mutations of random valid bodies", () => {
    it.each(BODY_OPS)(
      "%s",
      async (id) => {
        const e = entry(id);
        await fc.assert(
          fc.asyncProperty(requestArbitrary(e), fc.nat(), async (g, n) => {
            const prepared = await DRIVERS[id]!.build(g);
            const mutations: BodyMutation[] = bodyMutations(doc, requestSchema(e.op) as Schema, prepared.body);
            const m = pick(mutations, n);
            await tryBody(e, prepared, m.render(prepared.body), m.kind);
          }),
          fcParams(RUNS),
        );
      },
      TIMEOUT,
    );
  });

  describe("malformed JSON, content types and oversized bodies", () => {
    it.each(BODY_OPS)(
      "%s",
      async (id) => {
        const e = entry(id);
        const [g] = fc.sample(requestArbitrary(e), { numRuns: 1, seed: 7 }) as [Generated];
        const prepared = await DRIVERS[id]!.build(g);
        const valid = prepared.req.text as string;

        for (const m of MALFORMED_BODIES) await tryBody(e, prepared, m.text, "malformed");

        // Content types: only JSON is read; anything else is 415 (or 400 when it is JSON in another spelling).
        for (const contentType of [
          null,
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/xml",
          "application/json5",
          "application/a+b+json",
          "application/vnd_x+json",
        ]) {
          countKind("content-type");
          const ans = await exchange(e, prepared, { ...prepared.req, text: valid, contentType });
          expect([400, 415], describeExchange(prepared.req, ans)).toContain(ans.status);
        }
        for (const contentType of ["application/json; charset=utf-8", "APPLICATION/JSON", "application/vnd.api+json"]) {
          const fresh = await DRIVERS[id]!.build(g);
          await tryBody(e, fresh, fresh.req.text as string, "content-type", { contentType });
        }

        // The 100 KiB limit: exactly at the limit is read; one byte more is 413, with Content-Length and streamed.
        const padded = (text: string, size: number) =>
          `${text.slice(0, -1)}${" ".repeat(size - new TextEncoder().encode(text).length)}}`;
        for (const stream of [false, true]) {
          const fresh = await DRIVERS[id]!.build(g);
          const ans = await tryBody(e, fresh, padded(fresh.req.text as string, MAX_BODY_BYTES), "size-limit", { stream });
          expect(ans.status, `a body of exactly ${MAX_BODY_BYTES} bytes (stream: ${stream})`).not.toBe(413);
        }
        for (const stream of [false, true]) {
          for (const text of [padded(valid, MAX_BODY_BYTES + 1), "x".repeat(MAX_BODY_BYTES + 1), padded(valid, 1024 * 1024)]) {
            countKind("size-limit");
            const req = { ...prepared.req, text, stream };
            expectRefused(req, await exchange(e, prepared, req), 413);
          }
        }
        countKind("size-limit");
        const wrongTypeAndLarge = { ...prepared.req, text: "x".repeat(MAX_BODY_BYTES + 1), contentType: "text/plain" };
        expect([413, 415]).toContain((await exchange(e, prepared, wrongTypeAndLarge)).status);
      },
      TIMEOUT,
    );
  });

  const LIST_OPS = ["GET /v1/services", "GET /v1/paywalls", "GET /v1/transactions", "GET /v1/events"];

  describe("query-string mutations of list endpoints", () => {
    /** `must`: 400 VALIDATION_ERROR; `may`: 200 or a documented 4xx. Derived from each parameter's schema. */
    function queryMutations(e: OpEntry): { query: string; must: boolean }[] {
      const out: { query: string; must: boolean }[] = [];
      for (const p of e.op.parameters ?? []) {
        if (p.in !== "query") continue;
        const s = resolveSchema(doc, p.schema);
        const types = ([] as string[]).concat((s.type as string | string[] | undefined) ?? "string");
        const q = (value: string, must: boolean) => out.push({ query: `${p.name}=${value}`, must });
        if (types.includes("integer")) {
          if (typeof s.minimum === "number") q(String(s.minimum - 1), true);
          if (typeof s.maximum === "number") q(String(s.maximum + 1), true);
          for (const v of ["1.5", "abc", "1e400", "-1e400", "9".repeat(400), "NaN", "Infinity", "%00", "null", "true"])
            q(v, true);
          for (const v of ["-0", "0x10", "%201", "1e1", "", "%EF%BC%91"]) q(v, false);
          out.push({ query: `${p.name}=1&${p.name}=2`, must: true });
        }
        if (Array.isArray(s.enum)) {
          q("NOT_IN_ENUM", true);
          q(
            encodeURIComponent(
              String(s.enum[0]).toUpperCase() === String(s.enum[0])
                ? String(s.enum[0]).toLowerCase()
                : String(s.enum[0]).toUpperCase(),
            ),
            true,
          );
          q(`${encodeURIComponent(String(s.enum[0]))}%20`, true);
          out.push({
            query: `${p.name}=${encodeURIComponent(String(s.enum[0]))}&${p.name}=${encodeURIComponent(String(s.enum[0]))}`,
            must: true,
          });
        }
        if (types.includes("string") && !Array.isArray(s.enum)) {
          if (typeof s.maxLength === "number") q("x".repeat(s.maxLength + 1), true);
          if (s.format === "date-time")
            for (const v of ["2026-13-45T99:99:99Z", "yesterday", "2026-11-22", "1700000000000"]) q(v, true);
          for (const v of ["%F0%9F%98%80", "%E0%A4%A", "%00", "'%20OR%201=1%20--", "..%2F..%2F", "%ED%A0%80", "a".repeat(4000)])
            q(v, v.length > 64);
        }
      }
      for (const key of ["unknownParam", "__proto__", "constructor", "prototype", "hasOwnProperty", "toString"])
        out.push({ query: `${key}=1`, must: true });
      out.push(
        { query: "&&&", must: false },
        { query: "=1", must: false },
        { query: "limit", must: false },
        { query: "%", must: false },
      );
      return out;
    }

    it.each(LIST_OPS)(
      "%s",
      async (id) => {
        const e = entry(id);
        for (const { query, must } of queryMutations(e)) {
          countKind("query");
          const req = { method: "GET", path: `${e.path}?${query}` };
          const ans = await exchange(e, { actor: reader, req }, req);
          if (must) expectRefused(req, ans, 400);
        }
        if (id === "GET /v1/transactions" || id === "GET /v1/events") {
          countKind("query");
          const req = { method: "GET", path: `${e.path}?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z` };
          expectRefused(req, await exchange(e, { actor: reader, req }, req), 400);
        }
      },
      TIMEOUT,
    );
  });
});
