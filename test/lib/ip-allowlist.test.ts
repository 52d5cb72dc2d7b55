import { describe, expect, it } from "vitest";
import { isIpAllowed, normalizeAllowlist, parseAddress } from "../../src/lib/ip-allowlist.ts";

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
  it("unwraps IPv4-mapped IPv6 and brackets", () => {
    expect(parseAddress("::ffff:203.0.113.7")?.toString()).toBe("203.0.113.7");
    expect(parseAddress("[2001:db8::1]")?.toString()).toBe("2001:db8::1");
    expect(parseAddress(" 203.0.113.7 ")?.toString()).toBe("203.0.113.7");
    expect(parseAddress("example.com")).toBeNull();
  });
});

describe("normalizeAllowlist", () => {
  it("stores every entry as a CIDR block in canonical form", () => {
    expect(
      normalizeAllowlist([
        "203.0.113.7",
        " 198.51.100.0/24 ",
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

  it.each(["not-an-ip", "203.0.113.0/33", "2001:db8::/129", "203.0.113.0/", "/24", "203.0.113.7/-1", "", "*"])(
    "refuses %j, naming it",
    (entry) => {
      expect(() => normalizeAllowlist(["203.0.113.7", entry])).toThrow(entry === "" ? /IP/ : entry);
    },
  );

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
