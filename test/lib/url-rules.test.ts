import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkUpstreamUrl } from "../../src/lib/ssrf.ts";
import { isDotsOnly, routePathProblem, urlTextProblem } from "../../src/lib/url-rules.ts";
import { ALLOWED } from "../fixtures/ssrf-corpus.ts";

describe("urlTextProblem", () => {
  it.each(["https://api.example.com/v1?x=1#top", "http://[2001:db8::1]:8080/", "https://例え.jp/パス", "https://a.example/%20"])(
    "accepts %j",
    (text) => {
      expect(urlTextProblem(text)).toBeNull();
    },
  );

  it("refuses every control character, every whitespace character and a backslash, anywhere", () => {
    const bad = [
      ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(i)), // C0 and space
      ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)), // DEL, C1 and U+00A0
      "\u1680",
      "\u2000",
      "\u200a",
      "\u2028",
      "\u2029",
      "\u202f",
      "\u205f",
      "\u3000",
      "\ufeff",
      "\\",
    ];
    fc.assert(
      fc.property(fc.constantFrom(...bad), fc.nat(30), (char, at) => {
        const url = "https://api.example.com/v1/x";
        const text = url.slice(0, at) + char + url.slice(at);
        expect(urlTextProblem(text), JSON.stringify(text)).not.toBeNull();
      }),
      { numRuns: 500 },
    );
  });
});

const ROUTES_OK = [
  "/",
  "/v1/forecast",
  "/v1//forecast/daily/",
  "/users/:id",
  "/a/*",
  "/a/b~c/d-e_f",
  "/%7Euser",
  "/a/.b",
  "/a/b..",
  "/a/...",
  "/@me",
  "/a;b=c,d",
];
const ROUTES_BAD = [
  "", // empty
  "v1/forecast", // relative
  "//169.254.169.254/latest", // network-path reference
  "///a",
  "/\\127.0.0.1/x", // backslash
  "/a\\b",
  "/a/./b", // dot segments
  "/a/../b",
  "/..",
  "/.",
  "/a/..",
  "/a/%2e%2e/b", // percent-encoded dot segments
  "/a/%2E./b",
  "/a/.%2e",
  "/%2e",
  "/a b", // whitespace and controls
  "/a\tb",
  "/a\r\nHost: evil",
  "/a\u0000",
  "/a\u007f",
  "/a\u00a0",
  "/a?x=1", // query and fragment
  "/a#top",
  "/a%", // broken escapes
  "/a%2",
  "/a%zz",
  "/a<b>", // not URL path characters
  '/a"b',
  "/a{id}",
  "/a|b",
  "/a^b",
  "/a`b",
  "/é",
];

describe("routePathProblem", () => {
  it.each(ROUTES_OK)("accepts %j", (route) => {
    expect(routePathProblem(route)).toBeNull();
  });

  it.each(ROUTES_BAD)("refuses %j", (route) => {
    expect(routePathProblem(route)).toEqual(expect.any(String));
  });

  // Routes from every character a path could hold, including the dangerous ones.
  const route = fc
    .array(
      fc.oneof(
        fc.constantFrom("/", ".", "..", "%2e", "%2E", "\\", "//", ":", "@", "%", "%2f", "?", "#", " ", "\t", "a", "v1", "*"),
        fc.string({ maxLength: 3, unit: "binary" }),
      ),
      { maxLength: 10 },
    )
    .map((parts) => `/${parts.join("")}`);
  const bases = [...ALLOWED.map(([url]) => url), "https://api.example.com/base/path/", "http://[2001:db8::1]:8080/x?y#z"].filter(
    (url) => checkUpstreamUrl(url).allowed,
  );

  it("an accepted route joined to an accepted baseUrl never changes the origin", () => {
    let accepted = 0;
    fc.assert(
      fc.property(route, fc.constantFrom(...bases), (path, base) => {
        if (routePathProblem(path) !== null) return;
        accepted++;
        expect(new URL(path, base).origin, `${path} on ${base}`).toBe(new URL(base).origin);
      }),
      { numRuns: 5000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });

  it("an accepted route is kept as written when joined: no dot segment is resolved away", () => {
    fc.assert(
      fc.property(route, (path) => {
        if (routePathProblem(path) !== null) return;
        expect(new URL(path, "https://api.example.com").pathname).toBe(path);
      }),
      { numRuns: 5000 },
    );
  });
});

describe("routePathProblem: dot segments between encoded separators", () => {
  // Every spelling of a dot segment, between every spelling of a separator a decoding server may split on.
  const dots = fc.constantFrom(".", "..", "%2e", "%2E", "%2e%2e", "%2E%2e", ".%2e", "%2e.");
  const separator = fc.constantFrom("/", "%2f", "%2F", "%5c", "%5C");
  const name = fc.constantFrom("x", "etc", "v1", "");

  it("refuses a dot segment next to an encoded / or \\, on either side", () => {
    fc.assert(
      fc.property(name, dots, separator, separator, name, (before, dot, left, right, after) => {
        if (left === "/" && right === "/") return; // the plain spelling, covered above
        const route = `/${before}${before ? left : ""}${dot}${right}${after}`;
        expect(routePathProblem(route), route).toEqual(expect.any(String));
      }),
      { numRuns: 2000 },
    );
    for (const route of ["/..%2f..%2fx", "/%2e%2e%2f/x", "/a%5c..%5cb", "/..%2F", "/a/.%2e%5Cx"]) {
      expect(routePathProblem(route), route).toEqual(expect.any(String));
    }
  });

  it("still accepts an encoded / or \\ between names", () => {
    for (const route of ["/a%2fb", "/a%2Fb/c", "/files/%5Cshare", "/a%2f.b", "/a%2fb..", "/...%2fx"]) {
      expect(routePathProblem(route), route).toBeNull();
    }
  });
});

describe("isDotsOnly", () => {
  it.each([".", "..", "...", "....."])("%j is dots only", (slug) => expect(isDotsOnly(slug)).toBe(true));
  it.each(["a.", ".a", "a..b", "v1.2", ""])("%j is not", (slug) => expect(isDotsOnly(slug)).toBe(false));
});
