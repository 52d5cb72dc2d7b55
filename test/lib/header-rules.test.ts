import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  allowedHeaderProblem,
  HTTP_TOKEN,
  headerNameProblem,
  headerText,
  headerTokenProblem,
  headerValueProblem,
  isNeverForwarded,
  isReservedHeader,
  paramNameProblem,
  RESERVED_HEADER_PREFIXES,
  RESERVED_HEADERS,
} from "../../src/lib/header-rules.ts";

// Written independently of the module: the headers the platform owns and the payment standards name.
const MUST_BE_RESERVED = [
  "Host",
  "Content-Length",
  "Transfer-Encoding",
  "Connection",
  "Upgrade",
  "TE",
  "Trailer",
  "Keep-Alive",
  "Proxy-Authorization",
  "Proxy-Connection",
  "PAYMENT-SIGNATURE",
  "PAYMENT-REQUIRED",
  "PAYMENT-RESPONSE",
  "X-PAYMENT",
  "X-PAYMENT-RESPONSE",
  "Payment-Receipt",
  "Authorization",
  "WWW-Authenticate",
  "CF-Connecting-IP",
  "cf-ray",
  "X-Forwarded-For",
  "X-Forwarded-Host",
  "Forwarded",
  "X-HTTP-Method-Override",
  "X-Real-IP",
];

const MAY_BE_SET = [
  "X-Api-Key",
  "X-Upstream-Token",
  "Accept",
  "Cookie",
  "User-Agent",
  "X-Custom_Header",
  "api-version",
  "X-Payload",
];

/** Every case spelling of a name: header names are case-insensitive. */
const anyCase = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(""));

describe("reserved headers", () => {
  it.each(MUST_BE_RESERVED)("%s is reserved in any case", (name) => {
    fc.assert(
      fc.property(anyCase(name), (spelled) => {
        expect(headerNameProblem(spelled), spelled).toMatch(/set by the platform/);
      }),
    );
  });

  it.each(MAY_BE_SET)("%s may be set", (name) => {
    expect(headerNameProblem(name)).toBeNull();
  });

  it("the list is lowercase and its entries are tokens", () => {
    for (const name of [...RESERVED_HEADERS, ...RESERVED_HEADER_PREFIXES]) {
      expect(name).toBe(name.toLowerCase());
      expect(HTTP_TOKEN.test(name)).toBe(true);
    }
    expect(isReservedHeader("payment-anything-new")).toBe(true);
    expect(isReservedHeader("x-payment-info")).toBe(true);
  });
});

describe("header names are RFC 9110 tokens", () => {
  const tchar = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

  it("accepts every token that is not reserved", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...tchar), minLength: 1, maxLength: 20 }), (name) => {
        expect(headerTokenProblem(name)).toBeNull();
        expect(headerNameProblem(name) === null).toBe(!isReservedHeader(name));
      }),
    );
  });

  it("refuses a name with any other character", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 5 }),
        fc
          .integer({ min: 0, max: 0xffff })
          .map((code) => String.fromCharCode(code))
          .filter((c) => !tchar.includes(c)),
        fc.string({ maxLength: 5 }),
        (before, bad, after) => {
          const name = `X${before}${bad}${after}`;
          expect(headerTokenProblem(name), JSON.stringify(name)).not.toBeNull();
          expect(headerNameProblem(name), JSON.stringify(name)).not.toBeNull();
        },
      ),
    );
    for (const name of ["", "X Header", "X-Header:", "X-Header\r\nHost: evil", "X(y)", "X/Y", "X@Y", "Ünïcode"]) {
      expect(headerNameProblem(name), name).not.toBeNull();
    }
  });
});

/** Every control character (C0, DEL, C1) but TAB, and the Unicode line and paragraph separators. */
const VALUE_CONTROLS = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).filter((c) => c !== "\t"),
  ...Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)),
  "\u2028",
  "\u2029",
];

describe("header values", () => {
  it("refuse every control character but TAB, and line separators, anywhere", () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...VALUE_CONTROLS), fc.string(), (a, bad, b) => {
        expect(headerValueProblem(a + bad + b), JSON.stringify(bad)).not.toBeNull();
      }),
      { numRuns: 1000 },
    );
    for (const bad of ["\x01", "\x7f", "\u0085", "\u2028"]) expect(headerValueProblem(`tok${bad}en`)).not.toBeNull();
  });

  it("accept other text, TAB included", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme" }).filter((s) => !/[\p{Cc}\u2028\u2029]/u.test(s.replaceAll("\t", ""))),
        (value) => {
          expect(headerValueProblem(value)).toBeNull();
        },
      ),
    );
    expect(headerValueProblem("Bearer\ttoken-é")).toBeNull();
  });
});

describe("allowedHeaders: buyer headers a paywall may forward", () => {
  const NEVER = [...MUST_BE_RESERVED, "Cookie", "X-API-Key", "X-Api-Secret"];

  it.each(NEVER)("%s is refused in any case", (name) => {
    fc.assert(
      fc.property(anyCase(name), (spelled) => {
        expect(allowedHeaderProblem(spelled), spelled).toMatch(/never forwarded/);
        expect(isNeverForwarded(spelled)).toBe(true);
      }),
    );
  });

  it.each(["X-Buyer-Trace", "Accept-Language", "If-None-Match", "Range", "X-Request-Id", "User-Agent"])(
    "%s may be listed",
    (name) => {
      expect(allowedHeaderProblem(name)).toBeNull();
    },
  );

  it("a name that is not a token is refused too", () => {
    expect(allowedHeaderProblem("X Header")).toMatch(/HTTP header name/);
  });
});

describe("query and JSON field names", () => {
  it.each(["api_key", "apiKey", "key", "x-token", "a.b", "名前", "%41"])("accept %j", (name) => {
    expect(paramNameProblem(name)).toBeNull();
  });

  it.each(["", "a&b", "a=b", "a#b", "a?b", "a b", "a\tb", "a\nb", "a\u0000", "\u007f", "a\u0085"])("refuse %j", (name) => {
    expect(paramNameProblem(name)).not.toBeNull();
  });
});

describe("headerText: free text folded for a header parameter", () => {
  it.each([
    ["Line one\r\nline two", "Line one line two"],
    ["  tabs\tand\n\nblank lines  ", "tabs and blank lines"],
    ["nul\u0000del\u007fc1\u0085end", "nul del c1 end"],
    ["sep\u2028par\u2029bidi\u202eend\u2066", "sep par bidi end"],
    ['quotes " and \\ backslashes stay', 'quotes " and \\ backslashes stay'],
    ["Météo — 東京 🌦", "Météo — 東京 🌦"],
  ])("%j → %j", (text, folded) => {
    expect(headerText(text, 100)).toBe(folded);
  });

  it("cuts a long text to max code points, the last an ellipsis, never half of a surrogate pair", () => {
    expect(headerText("abcdef", 4)).toBe("abc…");
    expect(headerText("abc", 3)).toBe("abc");
    expect(headerText("🌦🌦🌦🌦", 3)).toBe("🌦🌦…");
  });

  it("whatever the text, the result is one line a header value may hold, at most max code points", () => {
    const piece = fc.constantFrom(
      "\r\n",
      "\n",
      "\r",
      "\u0000",
      "\u0007",
      "\u007f",
      "\u0085",
      "\t",
      " ",
      "\u2028",
      "\u202e",
      "🌦",
      "é",
      '"',
      "\\",
    );
    fc.assert(
      fc.property(
        fc.array(fc.oneof(piece, fc.string({ maxLength: 4 })), { maxLength: 40 }),
        fc.integer({ min: 1, max: 60 }),
        (parts, max) => {
          const folded = headerText(parts.join(""), max);
          return headerValueProblem(folded) === null && !/[\r\n\t]/.test(folded) && [...folded].length <= max;
        },
      ),
    );
  });
});
