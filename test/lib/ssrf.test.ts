import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkUpstreamUrl, type SsrfCheck } from "../../src/lib/ssrf.ts";
import {
  ALLOWED,
  BLOCKED,
  DENIED_IPV4_RANGES,
  DENIED_IPV6_RANGES,
  type DeniedRange,
  NEEDS_DNS,
} from "../fixtures/ssrf-corpus.ts";

// ---------------------------------------------------------------------------------------------------------
// Oracle: the deny list of the fixture as integer intervals, with plain arithmetic (no ipaddr.js).

function ipv4ToInt(text: string): number {
  return text.split(".").reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function intToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/** Hex groups only (no embedded IPv4), as written in the fixture and serialized by `new URL()`. */
function ipv6ToBigInt(text: string): bigint {
  const [head = "", tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  if (groups.length !== 8) throw new Error(`not an IPv6 address: ${text}`);
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(`0x${group}`), 0n);
}

function bigIntToGroups(n: bigint): number[] {
  return Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(16 * (7 - i))) & 0xffffn));
}

function bounds4(cidr: string): [number, number] {
  const [address = "", bits] = cidr.split("/");
  const size = 2 ** (32 - Number(bits));
  const first = ipv4ToInt(address);
  return [first, first + size - 1];
}

function bounds6(cidr: string): [bigint, bigint] {
  const [address = "", bits] = cidr.split("/");
  const size = 1n << BigInt(128 - Number(bits));
  const first = ipv6ToBigInt(address);
  return [first, first + size - 1n];
}

const V4 = DENIED_IPV4_RANGES.map((range) => bounds4(range.cidr));
const V6 = DENIED_IPV6_RANGES.map((range) => bounds6(range.cidr));
const MAX_V6 = (1n << 128n) - 1n;

const deniedV4 = (n: number) => V4.some(([lo, hi]) => n >= lo && n <= hi);
const deniedV6 = (n: bigint) =>
  n >> 32n === 0xffffn ? deniedV4(Number(n & 0xffffffffn)) : V6.some(([lo, hi]) => n >= lo && n <= hi);

// ---------------------------------------------------------------------------------------------------------
// Renderers: many spellings of one address that a WHATWG parser (and so `fetch`) reads as that address.

type Base = "dec" | "hex" | "oct";

interface Ipv4Spelling {
  parts: 1 | 2 | 3 | 4;
  bases: Base[];
  pads: number[];
  upper: boolean;
  trailingDot: boolean;
  chars: ("plain" | "percent" | "fullwidth")[];
}

const ipv4Spelling: fc.Arbitrary<Ipv4Spelling> = fc.record({
  parts: fc.constantFrom(1, 2, 3, 4),
  bases: fc.array(fc.constantFrom<Base>("dec", "hex", "oct"), { minLength: 4, maxLength: 4 }),
  pads: fc.array(fc.nat(3), { minLength: 4, maxLength: 4 }),
  upper: fc.boolean(),
  trailingDot: fc.boolean(),
  // Mostly plain, sometimes one character percent-encoded or full-width.
  chars: fc.array(
    fc.constantFrom<"plain" | "percent" | "fullwidth">("plain", "plain", "plain", "plain", "percent", "fullwidth"),
    {
      minLength: 64,
      maxLength: 64,
    },
  ),
});

function renderNumber(value: number, base: Base, pad: number, upper: boolean): string {
  if (base === "dec") return String(value);
  const text = base === "hex" ? `0x${"0".repeat(pad)}${value.toString(16)}` : `0${"0".repeat(pad)}${value.toString(8)}`;
  return upper ? text.toUpperCase() : text;
}

const FULLWIDTH_DOTS = ["\uff0e", "\u3002", "\uff61"];

function renderChar(char: string, style: Ipv4Spelling["chars"][number], index: number): string {
  if (style === "percent") return `%${char.charCodeAt(0).toString(16).padStart(2, "0")}`;
  if (style === "fullwidth") {
    if (char === ".") return FULLWIDTH_DOTS[index % FULLWIDTH_DOTS.length]!;
    return String.fromCharCode(char.charCodeAt(0) + 0xfee0); // ASCII 0x21..0x7e -> U+FF01..U+FF5E
  }
  return char;
}

/** An IPv4 address as 1 to 4 parts, each in decimal, hex or octal, with percent-encoded or full-width characters. */
function renderIpv4(n: number, s: Ipv4Spelling): string {
  const [a, b, c, d] = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const values = { 1: [n], 2: [a, n & 0xffffff], 3: [a, b, n & 0xffff], 4: [a, b, c, d] }[s.parts];
  const text = values.map((v, i) => renderNumber(v, s.bases[i]!, s.pads[i]!, s.upper)).join(".") + (s.trailingDot ? "." : "");
  return [...text].map((char, i) => renderChar(char, s.chars[i % s.chars.length]!, i)).join("");
}

const hex16 = (n: number) => n.toString(16);
const v4Halves = (n: number) => `${hex16(n >>> 16)}:${hex16(n & 0xffff)}`;

/** IPv6 literals embedding an IPv4 address that must be refused whatever that address is. */
const alwaysDeniedWrappers: ((n: number) => string)[] = [
  (n) => `[::${intToIpv4(n)}]`, // IPv4-compatible
  (n) => `[::${v4Halves(n)}]`,
  (n) => `[::ffff:0:${intToIpv4(n)}]`, // IPv4-translated
  (n) => `[::FFFF:0:${v4Halves(n)}]`,
  (n) => `[0:0:0:0:0:0:${intToIpv4(n)}]`,
  (n) => `[64:ff9b::${intToIpv4(n)}]`, // NAT64
  (n) => `[64:FF9B::${v4Halves(n)}]`,
  (n) => `[64:ff9b:1::${v4Halves(n)}]`, // local-use NAT64
  (n) => `[2002:${v4Halves(n)}::1]`, // 6to4
  (n) => `[2001:0:${v4Halves(n)}:0:0:${hex16((~n >>> 16) & 0xffff)}:${hex16(~n & 0xffff)}]`, // Teredo, client obfuscated
];

/** IPv4-mapped spellings: refused exactly when the IPv4 address is. */
const mappedWrappers: ((n: number) => string)[] = [
  (n) => `[::ffff:${intToIpv4(n)}]`,
  (n) => `[::FFFF:${v4Halves(n)}]`,
  (n) => `[0:0:0:0:0:ffff:${intToIpv4(n)}]`,
  (n) => `[0000:0000:0000:0000:0000:ffff:${hex16(n >>> 16).padStart(4, "0")}:${hex16(n & 0xffff).padStart(4, "0")}]`,
  (n) => `[0::ffff:${v4Halves(n)}]`,
];

interface Ipv6Spelling {
  compressAt: number;
  compressLength: number;
  ipv4Tail: boolean;
  upper: boolean;
  pad: boolean;
}

const ipv6Spelling: fc.Arbitrary<Ipv6Spelling> = fc.record({
  compressAt: fc.nat(7),
  compressLength: fc.nat(8),
  ipv4Tail: fc.boolean(),
  upper: fc.boolean(),
  pad: fc.boolean(),
});

/** An IPv6 literal with any zero run (or none) as `::`, optional leading zeros, case and dotted IPv4 tail. */
function renderIpv6(n: bigint, s: Ipv6Spelling): string {
  const groups = bigIntToGroups(n);
  const tail = s.ipv4Tail ? intToIpv4(Number(n & 0xffffffffn)) : null;
  const hexGroups = (tail ? groups.slice(0, 6) : groups).map((g) => (s.pad ? g.toString(16).padStart(4, "0") : g.toString(16)));
  let end = s.compressAt;
  while (end < hexGroups.length && end - s.compressAt < s.compressLength && groups[end] === 0) end++;
  let text: string;
  if (end > s.compressAt) {
    text = `${hexGroups.slice(0, s.compressAt).join(":")}::${hexGroups.slice(end).join(":")}`;
    if (tail) text += text.endsWith("::") ? tail : `:${tail}`;
  } else {
    text = [...hexGroups, ...(tail ? [tail] : [])].join(":");
  }
  return `[${s.upper ? text.toUpperCase() : text}]`;
}

interface UrlShape {
  scheme: string;
  port: string;
  path: string;
}

const urlShape: fc.Arbitrary<UrlShape> = fc.record({
  scheme: fc.constantFrom("http", "https", "HTTP", "hTTps"),
  port: fc.constantFrom("", ":80", ":443", ":8080", ":6379", ":65535"),
  path: fc.constantFrom("", "/", "/latest/meta-data/", "/v1?x=1", "/#frag", "?q=@example.com"),
});

const toUrl = (host: string, shape: UrlShape) => `${shape.scheme}://${host}${shape.port}${shape.path}`;

const inRange4 = ([lo, hi]: [number, number]) => fc.integer({ min: lo, max: hi });
const deniedIpv4 = fc.constantFrom(...V4).chain(inRange4);
const publicIpv4 = fc.integer({ min: 0, max: 0xffffffff }).filter((n) => !deniedV4(n));
const anyIpv4 = fc.integer({ min: 0, max: 0xffffffff });
// (::/3 holds IPv4-mapped addresses, judged as IPv4: the filter keeps the rare public one out.)
const deniedIpv6 = fc
  .constantFrom(...V6)
  .chain(([lo, hi]) => fc.bigInt({ min: lo, max: hi }))
  .filter(deniedV6);
// Global unicast 2000::/3 outside every denied range.
const publicIpv6 = fc.bigInt({ min: 0x2n << 124n, max: (0x4n << 124n) - 1n }).filter((n) => !deniedV6(n));

const RUNS = 2000;

/** The check's refusal; fails the test if `url` was allowed (so no assertion below it is skipped silently). */
function refusal(url: string): Extract<SsrfCheck, { allowed: false }> {
  const result = checkUpstreamUrl(url);
  expect(result.allowed, url).toBe(false);
  if (result.allowed) throw new Error("unreachable: asserted above");
  return result;
}

/** The URL the check allowed; fails the test if `url` was refused. */
function allowedUrl(url: string): URL {
  const result = checkUpstreamUrl(url);
  expect(result.allowed, url).toBe(true);
  if (!result.allowed) throw new Error("unreachable: asserted above");
  return result.url;
}

// ---------------------------------------------------------------------------------------------------------

describe("checkUpstreamUrl: corpus", () => {
  for (const [group, { reason, urls }] of Object.entries(BLOCKED)) {
    it.each(urls)(`refuses ${group}: %j`, (url) => {
      const result = checkUpstreamUrl(url);
      expect(result).toMatchObject({ allowed: false, reason });
    });
  }

  it.each(ALLOWED)("allows %j (host %s)", (url, hostname) => {
    const allowed = allowedUrl(url);
    expect(allowed.hostname).toBe(hostname);
    expect(allowed.href).toBe(new URL(url).href);
  });

  it.each(NEEDS_DNS)("allows %j at write time: only a DNS-aware request-time check can refuse it", (url) => {
    expect(checkUpstreamUrl(url).allowed).toBe(true);
  });

  it("refuses invalid punycode whichever way the runtime's IDNA reads it", () => {
    // workerd keeps "xn--localhost" as a single label, Node's parser rejects it as invalid punycode.
    expect(checkUpstreamUrl("http://xn--localhost/")).toMatchObject({ allowed: false });
  });

  it("gives a short message naming the normalized host, never the userinfo", () => {
    const address = refusal("http://0x7f.1:8080/x");
    expect(address.reason).toBe("private_address");
    expect(address.message).toContain("127.0.0.1");

    const name = refusal("http://Metadata.Google.Internal./");
    expect(name.message).toContain("metadata.google.internal.");

    const userinfo = refusal("https://admin:s3cr3t-t0ken@api.example.com/");
    expect(userinfo.reason).toBe("userinfo_not_allowed");
    expect(userinfo.message).not.toContain("s3cr3t");
    expect(userinfo.message).not.toContain("admin");

    for (const url of Object.values(BLOCKED).flatMap((group) => group.urls)) {
      expect(refusal(url).message, url).toMatch(/^[A-Z].{10,200}\.$/s);
    }
  });
});

describe("checkUpstreamUrl: every denied range", () => {
  const cases = (ranges: readonly DeniedRange[]) =>
    ranges.flatMap((range) => (["first", "middle", "last"] as const).map((which) => [range.cidr, which, range[which]] as const));

  it("fixture ranges are consistent (first and last bound the CIDR, middle inside)", () => {
    DENIED_IPV4_RANGES.forEach((range, i) => {
      const [lo, hi] = V4[i]!;
      expect([ipv4ToInt(range.first), ipv4ToInt(range.last)]).toEqual([lo, hi]);
      expect(ipv4ToInt(range.middle)).toSatisfy((n: number) => n >= lo && n <= hi);
    });
    DENIED_IPV6_RANGES.forEach((range, i) => {
      const [lo, hi] = V6[i]!;
      expect([ipv6ToBigInt(range.first), ipv6ToBigInt(range.last)]).toEqual([lo, hi]);
      expect(ipv6ToBigInt(range.middle)).toSatisfy((n: bigint) => n >= lo && n <= hi);
    });
  });

  it.each(cases(DENIED_IPV4_RANGES))("refuses %s %s: %s, also IPv4-mapped", (_cidr, _which, address) => {
    expect(checkUpstreamUrl(`http://${address}/`)).toMatchObject({ allowed: false, reason: "private_address" });
    expect(checkUpstreamUrl(`http://[::ffff:${address}]/`)).toMatchObject({ allowed: false, reason: "private_address" });
  });

  it.each(cases(DENIED_IPV6_RANGES))("refuses %s %s: %s", (_cidr, _which, address) => {
    expect(checkUpstreamUrl(`http://[${address}]/`)).toMatchObject({ allowed: false, reason: "private_address" });
  });

  it("allows the neighbours just outside each range unless another range holds them", () => {
    let checked = 0;
    for (const [lo, hi] of V4) {
      for (const n of [lo - 1, hi + 1]) {
        if (n < 0 || n > 0xffffffff || deniedV4(n)) continue;
        expect(checkUpstreamUrl(`http://${intToIpv4(n)}/`).allowed, intToIpv4(n)).toBe(true);
        checked++;
      }
    }
    for (const [lo, hi] of V6) {
      for (const n of [lo - 1n, hi + 1n]) {
        if (n < 0n || n > MAX_V6 || deniedV6(n)) continue;
        const host = `[${bigIntToGroups(n)
          .map((g) => g.toString(16))
          .join(":")}]`;
        expect(checkUpstreamUrl(`http://${host}/`).allowed, host).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });
});

describe("checkUpstreamUrl: properties", () => {
  it("refuses every denied IPv4 address in any spelling", () => {
    fc.assert(
      fc.property(deniedIpv4, ipv4Spelling, urlShape, (n, spelling, shape) => {
        const url = toUrl(renderIpv4(n, spelling), shape);
        expect(checkUpstreamUrl(url), url).toMatchObject({ allowed: false, reason: "private_address" });
      }),
      { numRuns: RUNS },
    );
  });

  it("refuses every denied IPv4 address wrapped as IPv4-mapped IPv6", () => {
    fc.assert(
      fc.property(deniedIpv4, fc.constantFrom(...mappedWrappers), urlShape, (n, wrap, shape) => {
        const url = toUrl(wrap(n), shape);
        expect(checkUpstreamUrl(url), url).toMatchObject({ allowed: false, reason: "private_address" });
      }),
      { numRuns: RUNS },
    );
  });

  it("refuses any IPv4 address inside IPv4-compatible, NAT64, 6to4 and Teredo IPv6", () => {
    fc.assert(
      fc.property(anyIpv4, fc.constantFrom(...alwaysDeniedWrappers), urlShape, (n, wrap, shape) => {
        const url = toUrl(wrap(n), shape);
        expect(checkUpstreamUrl(url), url).toMatchObject({ allowed: false, reason: "private_address" });
      }),
      { numRuns: RUNS },
    );
  });

  it("allows every public IPv4 address in any spelling, normalized to dotted decimal", () => {
    fc.assert(
      fc.property(publicIpv4, ipv4Spelling, urlShape, (n, spelling, shape) => {
        const url = toUrl(renderIpv4(n, spelling), shape);
        expect(allowedUrl(url).hostname).toBe(intToIpv4(n));
      }),
      { numRuns: RUNS },
    );
  });

  it("allows every public IPv4 address as IPv4-mapped IPv6", () => {
    fc.assert(
      fc.property(publicIpv4, fc.constantFrom(...mappedWrappers), (n, wrap) => {
        const hostname = allowedUrl(`https://${wrap(n)}/`).hostname;
        expect(ipv6ToBigInt(hostname.slice(1, -1))).toBe((0xffffn << 32n) | BigInt(n));
      }),
      { numRuns: RUNS },
    );
  });

  it("decides any IPv4 address exactly as the deny list does", () => {
    fc.assert(
      fc.property(anyIpv4, ipv4Spelling, (n, spelling) => {
        const url = `http://${renderIpv4(n, spelling)}/`;
        expect(checkUpstreamUrl(url).allowed, url).toBe(!deniedV4(n));
      }),
      { numRuns: RUNS },
    );
  });

  it("refuses every denied IPv6 address in any spelling", () => {
    fc.assert(
      fc.property(deniedIpv6, ipv6Spelling, urlShape, (n, spelling, shape) => {
        const url = toUrl(renderIpv6(n, spelling), shape);
        expect(checkUpstreamUrl(url), url).toMatchObject({ allowed: false, reason: "private_address" });
      }),
      { numRuns: RUNS },
    );
  });

  it("allows every public IPv6 address in any spelling", () => {
    fc.assert(
      fc.property(publicIpv6, ipv6Spelling, (n, spelling) => {
        const url = `http://${renderIpv6(n, spelling)}/`;
        expect(ipv6ToBigInt(allowedUrl(url).hostname.slice(1, -1))).toBe(n);
      }),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------
// `allowLoopback` (what `npm run dev` turns on): this machine passes, nothing else the corpus refuses does.

/** Loopback by the URL's normalized text: 127.0.0.0/8, `localhost`, `[::1]`, or 127.x mapped into IPv6. */
function isLoopbackOracle(url: string): boolean {
  const host = URL.parse(url)?.hostname ?? "";
  if (host === "localhost" || host === "localhost." || host === "[::1]") return true;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return ipv4ToInt(host) >>> 24 === 127;
  return /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host);
}

describe("checkUpstreamUrl: allowLoopback", () => {
  const hostReasons = new Set(["private_address", "blocked_hostname"]);
  const corpus = Object.values(BLOCKED).flatMap(({ reason, urls }) => urls.map((url) => [url, reason] as const));

  it("allows exactly the corpus's loopback targets; every other refusal stays as it is", () => {
    let flipped = 0;
    for (const [url, reason] of corpus) {
      const result = checkUpstreamUrl(url, { allowLoopback: true });
      if (hostReasons.has(reason) && isLoopbackOracle(url)) {
        expect(result.allowed, url).toBe(true);
        flipped++;
      } else {
        expect(result, url).toMatchObject({ allowed: false, reason });
      }
    }
    expect(flipped).toBeGreaterThan(20); // the corpus's many spellings of 127.0.0.1, localhost and ::1
  });

  it.each([
    ["http://127.0.0.1:3000/", "127.0.0.1"],
    ["http://127.1:3000/", "127.0.0.1"],
    ["http://2130706433/", "127.0.0.1"],
    ["http://127.255.255.254/", "127.255.255.254"],
    ["http://LOCALHOST:3000/", "localhost"],
    ["http://[::1]:3000/", "[::1]"],
    ["http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"],
  ])("allows %j (host %s)", (url, hostname) => {
    const result = checkUpstreamUrl(url, { allowLoopback: true });
    expect(result.allowed && result.url.hostname).toBe(hostname);
  });

  it.each([
    ["http://0.0.0.0/", "private_address"],
    ["http://128.0.0.1/", "allowed"],
    ["http://126.255.255.255/", "allowed"],
    ["http://10.0.0.1/", "private_address"],
    ["http://[::2]/", "private_address"],
    ["http://[::]/", "private_address"],
    ["http://[::127.0.0.1]/", "private_address"],
    ["http://api.localhost/", "blocked_hostname"],
    ["http://localhost.localdomain/", "blocked_hostname"],
    ["http://u:p@127.0.0.1/", "userinfo_not_allowed"],
    ["http://@localhost/", "userinfo_not_allowed"],
    ["http://127.0.0.1:0/", "port_not_allowed"],
    ["ftp://127.0.0.1/", "scheme_not_allowed"],
  ])("keeps its rule for %j (%s)", (url, verdict) => {
    const result = checkUpstreamUrl(url, { allowLoopback: true });
    if (verdict === "allowed") expect(result.allowed).toBe(true);
    else expect(result).toMatchObject({ allowed: false, reason: verdict });
  });
});
