import { describe, expect, it } from "vitest";
import { cachedAnswer, forwardedQuery, isStorable, storeAnswer, varyingParts } from "../../src/gateway/answer-cache.ts";
import { cacheKeyInputs, cacheRulesOf, cacheRulesProblems, MAX_CACHE_TTL_SECONDS } from "../../src/lib/cache-rules.ts";
import { forwardedHeaderNames } from "../../src/lib/header-rules.ts";

describe("cacheRulesOf", () => {
  it("no rules, an empty object, ttlSeconds 0: never cached, nothing to report", () => {
    for (const raw of [null, undefined, {}, { ttlSeconds: 0 }])
      expect(cacheRulesOf(raw)).toEqual({ rules: null, notActedOn: [] });
  });

  it("a positive ttl alone: the safest defaults (whole query, every forwarded header, the body, 200 only)", () => {
    expect(cacheRulesOf({ ttlSeconds: 60 })).toEqual({
      rules: { ttlSeconds: 60, varyQuery: null, varyHeaders: null, varyBody: true, statuses: [200] },
      notActedOn: [],
    });
  });

  it("every known key as given; header names lower-cased", () => {
    const raw = {
      ttlSeconds: MAX_CACHE_TTL_SECONDS,
      varyQuery: ["city", "Day"],
      varyHeaders: ["Accept-Language"],
      varyBody: false,
      statuses: [200, 301],
    };
    expect(cacheRulesOf(raw).rules).toEqual({
      ttlSeconds: 86_400,
      varyQuery: ["city", "Day"],
      varyHeaders: ["accept-language"],
      varyBody: false,
      statuses: [200, 301],
    });
  });

  it("unknown keys are kept out and reported, with no problem named", () => {
    expect(cacheRulesOf({ ttl: 60, vary: ["city"] })).toEqual({
      rules: null,
      notActedOn: [
        { key: "ttl", problem: null },
        { key: "vary", problem: null },
      ],
    });
  });

  it.each([
    ["ttlSeconds", "60"],
    ["ttlSeconds", 1.5],
    ["ttlSeconds", -1],
    ["ttlSeconds", MAX_CACHE_TTL_SECONDS + 1],
    ["varyQuery", "city"],
    ["varyQuery", [1]],
    ["varyQuery", [""]],
    ["varyQuery", Array.from({ length: 21 }, (_, i) => `p${i}`)],
    ["varyHeaders", ["bad header"]],
    ["varyBody", "yes"],
    ["statuses", []],
    ["statuses", [404]],
    ["statuses", [200.5]],
    ["statuses", [199]],
  ])("%s = %j: not acted on (its safe default applies) and a problem for the create schema", (key, value) => {
    const reading = cacheRulesOf({ ttlSeconds: 60, [key]: value });
    expect(reading.notActedOn).toEqual([{ key, problem: expect.any(String) }]);
    expect(cacheRulesProblems({ ttlSeconds: 60, [key]: value })).toEqual([{ key, message: expect.any(String) }]);
    if (key === "ttlSeconds") expect(reading.rules).toBeNull();
    else expect(reading.rules).toEqual({ ttlSeconds: 60, varyQuery: null, varyHeaders: null, varyBody: true, statuses: [200] });
  });

  it("an unknown key is no problem for the create schema (the field is free-form)", () => {
    expect(cacheRulesProblems({ ttlSeconds: 60, note: "x" })).toEqual([]);
  });
});

describe("the cache key's varying parts", () => {
  const rules = cacheRulesOf({ ttlSeconds: 60 }).rules!;
  const req = (url: string, headers: Record<string, string> = {}, method = "GET") => ({
    method,
    url,
    headers: new Headers(headers),
  });
  const parts = (r: ReturnType<typeof req>, over = {}, allowed: string[] = [], body: string | null = null) =>
    varyingParts({ ...rules, ...over }, r, allowed, body);

  it("by default the whole query, the method, the forwarded buyer headers and the body vary it; other headers do not", () => {
    const base = parts(req("https://p/x?a=1&b=2", { accept: "application/json" }));
    expect(parts(req("https://p/x?a=1&b=2", { accept: "application/json", "user-agent": "other", cookie: "s=1" }))).toBe(base);
    expect(parts(req("https://p/x?b=2&a=1", { accept: "application/json" }))).not.toBe(base);
    expect(parts(req("https://p/x?a=1&b=2", { accept: "text/plain" }))).not.toBe(base);
    expect(parts(req("https://p/x?a=1&b=2", { accept: "application/json" }, "POST"))).not.toBe(base);
    expect(parts(req("https://p/x?a=1&b=2", { accept: "application/json", "x-user": "1" }), {}, ["X-User"])).not.toBe(base);
    expect(parts(req("https://p/x?a=1&b=2", { accept: "application/json" }), {}, [], "abc")).not.toBe(base);
  });

  it("varyQuery: only the named parameters (the only ones forwarded), in any order; varyHeaders: added to the forwarded headers", () => {
    const named = { varyQuery: ["a"], varyHeaders: ["x-lang"] };
    const base = parts(req("https://p/x?a=1&utm=z", { "x-lang": "en" }), named, [], "abc");
    expect(parts(req("https://p/x?utm=y&a=1", { "x-lang": "en", "user-agent": "other" }), named, [], "abc")).toBe(base);
    expect(parts(req("https://p/x?a=2", { "x-lang": "en" }), named, [], "abc")).not.toBe(base);
    expect(parts(req("https://p/x?a=1", { "x-lang": "fr" }), named, [], "abc")).not.toBe(base);
  });

  it("whatever the rules say, every forwarded buyer header and the body vary it: a narrower key would share one buyer's answer", () => {
    const narrow = { varyHeaders: ["accept"], varyBody: false };
    const alice = parts(
      req("https://p/x", { accept: "application/json", "x-user-token": "alice" }),
      narrow,
      ["X-User-Token"],
      "abc",
    );
    expect(
      parts(req("https://p/x", { accept: "application/json", "x-user-token": "bob" }), narrow, ["X-User-Token"], "abc"),
    ).not.toBe(alice);
    expect(
      parts(req("https://p/x", { accept: "application/json", "x-user-token": "alice" }), narrow, ["X-User-Token"], "def"),
    ).not.toBe(alice);
    expect(
      parts(
        req("https://p/x", { accept: "application/json", "content-type": "text/csv", "x-user-token": "alice" }),
        narrow,
        ["X-User-Token"],
        "abc",
      ),
    ).not.toBe(alice);
    // A header the paywall does not forward never varies it (unless varyHeaders names it).
    expect(
      parts(
        req("https://p/x", { accept: "application/json", "x-user-token": "alice", "x-other": "1" }),
        narrow,
        ["X-User-Token"],
        "abc",
      ),
    ).toBe(alice);
  });
});

describe("cacheKeyInputs and the forwarded query", () => {
  it("names what the key holds: varyQuery's names or the whole query; the forwarded headers and varyHeaders' names", () => {
    const rules = cacheRulesOf({ ttlSeconds: 60, varyQuery: ["city", "city", "b"], varyHeaders: ["X-Lang"] }).rules!;
    expect(cacheKeyInputs(rules, forwardedHeaderNames(["X-User-Token", "Cookie"]))).toEqual({
      query: ["b", "city"],
      headers: ["accept", "content-type", "x-lang", "x-user-token"],
    });
    expect(cacheKeyInputs(cacheRulesOf({ ttlSeconds: 60 }).rules!, forwardedHeaderNames([]))).toEqual({
      query: null,
      headers: ["accept", "content-type"],
    });
  });

  it("forwardedQuery: under varyQuery only its parameters (every value) go upstream; else the whole query", () => {
    const query = new URLSearchParams("city=lisbon&inject=X&city=porto");
    const rules = cacheRulesOf({ ttlSeconds: 60, varyQuery: ["city"] }).rules!;
    expect(forwardedQuery(query, rules).toString()).toBe("city=lisbon&city=porto");
    expect(forwardedQuery(query, cacheRulesOf({ ttlSeconds: 60 }).rules!).toString()).toBe(query.toString());
    expect(forwardedQuery(query, null).toString()).toBe(query.toString());
  });
});

describe("isStorable", () => {
  const rules = cacheRulesOf({ ttlSeconds: 60 }).rules!;
  const answer = (headers: Record<string, string> = {}, status = 200, bytes = 10) => ({
    status,
    headers: new Headers(headers),
    body: new ArrayBuffer(bytes),
  });

  it("a plain 200 is; a public or max-age Cache-Control does not matter", () => {
    expect(isStorable(rules, answer())).toBe(true);
    expect(isStorable(rules, answer({ "cache-control": "public, max-age=5" }))).toBe(true);
    expect(isStorable(rules, answer({ vary: "Accept" }))).toBe(true);
  });

  it.each([
    ["Set-Cookie", answer({ "set-cookie": "s=1" })],
    ["Cache-Control: private", answer({ "cache-control": "max-age=60, private" })],
    ["Cache-Control: no-store", answer({ "cache-control": "no-store" })],
    ["Cache-Control: no-cache", answer({ "cache-control": "no-cache" })],
    ["Vary: *", answer({ vary: "Accept, *" })],
    ["a status outside statuses", answer({}, 201)],
    ["a body over 1 MiB", answer({}, 200, 1024 * 1024 + 1)],
  ])("%s is not", (_, a) => {
    expect(isStorable(rules, a)).toBe(false);
  });
});

describe("a stored answer's freshness", () => {
  it("is served with its age until ttlSeconds have passed, then it is a miss", async () => {
    const rules = cacheRulesOf({ ttlSeconds: 60 }).rules!;
    const key = `https://paid-answers.invalid/pw_fresh/1/1/${crypto.randomUUID()}`;
    const stored = Date.now();
    await storeAnswer(
      key,
      rules,
      { status: 200, headers: new Headers({ "content-type": "text/plain" }), body: new TextEncoder().encode("hello") },
      stored,
    );
    const fresh = await cachedAnswer(key, rules, stored + 59_999);
    expect(fresh?.age).toBe(59);
    expect(fresh?.answer.status).toBe(200);
    expect(fresh?.answer.headers.get("content-type")).toBe("text/plain");
    expect(new TextDecoder().decode(fresh?.answer.body as Uint8Array)).toBe("hello");
    expect(await cachedAnswer(key, rules, stored + 60_000)).toBeNull();
    expect(await cachedAnswer(key, rules, stored - 1)).toBeNull();
    expect(await cachedAnswer(`${key}-other`, rules, stored)).toBeNull();
  });
});
