import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allowEntryProblem, isIpAllowed, normalizeAllowlist, parseAddress } from "../../src/lib/ip-allowlist.ts";

describe("isIpAllowed", () => {
  it("admits any address, or none, when the list is empty", () => {
    for (const ip of ["203.0.113.7", "2001:db8::1", "::ffff:10.0.0.1", undefined, "", "garbage"]) {
      expect(isIpAllowed([], ip)).toBe(true);
    }
  });

  it("matches an exact IPv4 address", () => {
    expect(isIpAllowed(["203.0.113.7"], "203.0.113.7")).toBe(true);
    expect(isIpAllowed(["203.0.113.7"], "203.0.113.8")).toBe(false);
    expect(isIpAllowed(["203.0.113.7"], "203.0.113.70")).toBe(false);
  });

  it("matches an IPv4 CIDR block, edges included", () => {
    const list = ["198.51.100.0/24"];
    expect(isIpAllowed(list, "198.51.100.0")).toBe(true);
    expect(isIpAllowed(list, "198.51.100.255")).toBe(true);
    expect(isIpAllowed(list, "198.51.101.0")).toBe(false);
    expect(isIpAllowed(list, "198.51.99.255")).toBe(false);
    expect(isIpAllowed(["10.0.0.0/8"], "10.255.255.255")).toBe(true);
    expect(isIpAllowed(["10.0.0.0/8"], "11.0.0.0")).toBe(false);
    expect(isIpAllowed(["203.0.113.7/32"], "203.0.113.7")).toBe(true);
    expect(isIpAllowed(["203.0.113.7/32"], "203.0.113.6")).toBe(false);
  });

  it("matches an exact IPv6 address in any notation", () => {
    expect(isIpAllowed(["2001:db8::1"], "2001:db8::1")).toBe(true);
    expect(isIpAllowed(["2001:db8::1"], "2001:0DB8:0000:0000:0000:0000:0000:0001")).toBe(true);
    expect(isIpAllowed(["2001:0db8:0:0:0:0:0:1"], "2001:db8::1")).toBe(true);
    expect(isIpAllowed(["2001:db8::1"], "2001:db8::2")).toBe(false);
  });

  it("matches an IPv6 CIDR block", () => {
    const list = ["2001:db8:abcd::/48"];
    expect(isIpAllowed(list, "2001:db8:abcd::")).toBe(true);
    expect(isIpAllowed(list, "2001:db8:abcd:ffff:ffff:ffff:ffff:ffff")).toBe(true);
    expect(isIpAllowed(list, "2001:db8:abce::1")).toBe(false);
  });

  it("never matches across families", () => {
    expect(isIpAllowed(["2001:db8::/32"], "203.0.113.7")).toBe(false);
    expect(isIpAllowed(["0.0.0.0/0"], "2001:db8::1")).toBe(false);
    expect(isIpAllowed(["::/0"], "203.0.113.7")).toBe(false);
    expect(isIpAllowed(["0.0.0.0/0"], "203.0.113.7")).toBe(true);
    expect(isIpAllowed(["::/0"], "2001:db8::1")).toBe(true);
  });

  it("matches an IPv4-mapped IPv6 client against IPv4 entries", () => {
    expect(isIpAllowed(["203.0.113.7"], "::ffff:203.0.113.7")).toBe(true);
    expect(isIpAllowed(["203.0.113.0/24"], "::ffff:203.0.113.99")).toBe(true);
    expect(isIpAllowed(["203.0.113.7"], "::FFFF:cb00:7107")).toBe(true); // 203.0.113.7 in hex
    expect(isIpAllowed(["203.0.113.7"], "::ffff:203.0.113.8")).toBe(false);
    expect(isIpAllowed(["203.0.113.0/24"], "::ffff:198.51.100.1")).toBe(false);
  });

  it("matches IPv4-mapped entries against IPv4 clients", () => {
    expect(isIpAllowed(["::ffff:203.0.113.7"], "203.0.113.7")).toBe(true);
    expect(isIpAllowed(["::ffff:203.0.113.0/120"], "203.0.113.200")).toBe(true);
    expect(isIpAllowed(["::ffff:203.0.113.0/120"], "203.0.114.1")).toBe(false);
  });

  it("admits when any one entry matches", () => {
    const list = ["198.51.100.0/24", "2001:db8::/32", "203.0.113.7"];
    expect(isIpAllowed(list, "203.0.113.7")).toBe(true);
    expect(isIpAllowed(list, "2001:db8::42")).toBe(true);
    expect(isIpAllowed(list, "192.0.2.1")).toBe(false);
  });

  it("ignores invalid entries, and a list of only invalid entries admits nobody", () => {
    expect(isIpAllowed(["not-an-ip", "203.0.113.7"], "203.0.113.7")).toBe(true);
    for (const entry of ["not-an-ip", "203.0.113.0/33", "2001:db8::/129", "203.0.113", "203.0.113.0/", "/24", "*"]) {
      expect(isIpAllowed([entry], "203.0.113.7"), entry).toBe(false);
      expect(isIpAllowed([entry], "2001:db8::1"), entry).toBe(false);
    }
  });

  it("refuses a missing or unparsable client address when the list is not empty", () => {
    for (const ip of [undefined, "", "garbage", "203.0.113.7, 198.51.100.1", "203.0.113.256"]) {
      expect(isIpAllowed(["0.0.0.0/0", "::/0"], ip), String(ip)).toBe(false);
    }
  });
});

describe("parseAddress", () => {
  it("unwraps IPv4-mapped IPv6, and reads canonical text only", () => {
    expect(parseAddress("::ffff:203.0.113.7")?.toString()).toBe("203.0.113.7");
    expect(parseAddress("2001:db8::1")?.toString()).toBe("2001:db8::1");
    for (const text of ["[2001:db8::1]", " 203.0.113.7 ", "example.com", "fe80::1%eth0"])
      expect(parseAddress(text), text).toBeNull();
  });

  it("keeps IPv4-compatible and IPv4-translated IPv6 as IPv6 (only IPv4-mapped is IPv4)", () => {
    expect(parseAddress("::203.0.113.7")?.kind()).toBe("ipv6");
    expect(parseAddress("::203.0.113.7")?.toString()).toBe("::cb00:7107");
    expect(parseAddress("::ffff:0:203.0.113.7")?.kind()).toBe("ipv6");
    expect(parseAddress("::ffff:203.0.113.7")?.kind()).toBe("ipv4");
  });
});

describe("normalizeAllowlist", () => {
  it("stores every entry as a CIDR block in canonical form", () => {
    expect(
      normalizeAllowlist([
        "203.0.113.7",
        "198.51.100.0/24",
        "2001:0DB8:0:0:0:0:0:1",
        "2001:db8:abcd::/48",
        "::ffff:203.0.113.7",
        "::ffff:203.0.113.0/120",
      ]),
    ).toEqual(["203.0.113.7/32", "198.51.100.0/24", "2001:db8::1/128", "2001:db8:abcd::/48", "203.0.113.7/32", "203.0.113.0/24"]);
  });

  it("keeps an empty list empty (any address)", () => {
    expect(normalizeAllowlist([])).toEqual([]);
  });

  it.each([
    "not-an-ip",
    "203.0.113.0/33",
    "2001:db8::/129",
    "203.0.113.0/",
    "/24",
    "203.0.113.7/-1",
    "",
    "*",
    "10.0.0.010", // octal-looking octet: other parsers read 10.0.0.8
    "010.0.0.1",
    "10.0.0.08",
    "1.2.3", // short forms
    "127.1",
    "0x7f.1", // hex
    "0x7f.0.0.1",
    "0177.0.0.1", // octal
    "2130706433", // one integer
    "256.0.0.1",
    "1.2.3.4.5",
    " 203.0.113.7", // surrounding whitespace: callers trim list items
    "203.0.113.7 ",
    "[2001:db8::1]",
    "fe80::1%eth0", // zone id
    "fe80::1%25eth0",
    "2001:db8::00001",
    "::ffff:010.0.0.1",
    "::ffff:127.1",
    "203.0.113.0/024", // prefix with a leading zero
    "203.0.113.0/+24",
    "203.0.113.0/24/24",
    "203.0.113.7/24", // bits set after the prefix
    "2001:db8::1/32",
    "::ffff:203.0.113.0/8", // an IPv4-mapped block needs a prefix of 96 or more
    "２０３.0.113.7", // full-width digits
  ])("refuses %j, naming it", (entry) => {
    expect(() => normalizeAllowlist(["203.0.113.7", entry])).toThrow(entry === "" ? /IP/ : entry);
  });

  it("matches what it normalizes: each normalized entry admits the addresses the original did", () => {
    const original = ["203.0.113.7", "198.51.100.0/24", "2001:db8::1", "::ffff:192.0.2.0/120"];
    const normalized = normalizeAllowlist(original);
    for (const ip of [
      "203.0.113.7",
      "198.51.100.42",
      "2001:db8::1",
      "192.0.2.9",
      "::ffff:192.0.2.9",
      "192.0.3.1",
      "2001:db8::2",
    ]) {
      expect(isIpAllowed(normalized, ip), ip).toBe(isIpAllowed(original, ip));
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Generated spellings: one address, many texts; only the canonical ones are read as that address.

const ipv4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
const octets = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

/** Spellings other parsers (inet_aton, WHATWG) read as the same IPv4 address: never canonical. */
const otherSpellings: ((n: number) => string)[] = [
  (n) => String(n), // one integer
  (n) => `0x${n.toString(16)}`,
  (n) => `0${n.toString(8)}`,
  (n) => `${n >>> 24}.${n & 0xffffff}`, // two parts
  (n) => `${n >>> 24}.${(n >>> 16) & 255}.${n & 0xffff}`, // three parts
  (n) =>
    octets(n)
      .map((o, i) => (i === 3 ? `0${o.toString(8)}` : o))
      .join("."), // an octal octet
  (n) =>
    octets(n)
      .map((o, i) => (i === 0 ? `0x${o.toString(16)}` : o))
      .join("."), // a hex octet
  (n) =>
    octets(n)
      .map((o, i) => (i === 2 ? `00${o}` : o))
      .join("."), // a padded decimal octet
];

const anyIpv4 = fc.integer({ min: 0, max: 0xffffffff });

describe("canonical forms, generated", () => {
  it("an entry is accepted in dotted decimal and refused in every other IPv4 spelling", () => {
    fc.assert(
      fc.property(anyIpv4, fc.constantFrom(...otherSpellings), (n, spell) => {
        expect(normalizeAllowlist([ipv4Text(n)])).toEqual([`${ipv4Text(n)}/32`]);
        const other = spell(n);
        if (other !== ipv4Text(n)) expect(allowEntryProblem(other), other).not.toBeNull();
      }),
      { numRuns: 1000 },
    );
  });

  it("a client address in another IPv4 spelling, or IPv4-compatible, never matches; IPv4-mapped does", () => {
    fc.assert(
      fc.property(anyIpv4, fc.constantFrom(...otherSpellings), (n, spell) => {
        const entry = [ipv4Text(n)];
        expect(isIpAllowed(entry, ipv4Text(n))).toBe(true);
        expect(isIpAllowed(entry, `::ffff:${ipv4Text(n)}`)).toBe(true);
        expect(isIpAllowed(entry, `::${ipv4Text(n)}`)).toBe(false);
        expect(isIpAllowed(entry, `::ffff:0:${ipv4Text(n)}`)).toBe(false);
        const other = spell(n);
        if (other !== ipv4Text(n)) expect(isIpAllowed(entry, other), other).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it("a CIDR block is accepted exactly when no bit is set after its prefix", () => {
    fc.assert(
      fc.property(anyIpv4, fc.integer({ min: 0, max: 32 }), (n, bits) => {
        const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
        const network = (n & mask) >>> 0;
        expect(allowEntryProblem(`${ipv4Text(network)}/${bits}`)).toBeNull();
        expect(allowEntryProblem(`${ipv4Text(n)}/${bits}`) === null).toBe(n === network);
        expect(isIpAllowed([`${ipv4Text(network)}/${bits}`], ipv4Text(n))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
