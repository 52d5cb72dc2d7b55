import ipaddr from "ipaddr.js";

/**
 * IP allowlists of API keys: entries and the client address (`CF-Connecting-IP`) are read in canonical forms only,
 * so an entry means what it says and a client address cannot be spelled into a match.
 *
 * - IPv4: dotted quad of decimal octets 0-255 without leading zeros (`10.0.0.010`, `1.2.3`, `0x7f.1`, `2130706433`
 *   are refused: other parsers read them as other addresses).
 * - IPv6: RFC 4291 text (any case, `::` compression, leading zeros in groups, a dotted IPv4 tail in the form above),
 *   without a zone id (`fe80::1%eth0`) and without brackets.
 * - CIDR block: one of those, `/`, and a decimal prefix without leading zeros (0-32 or 0-128), with no bits set
 *   after the prefix (`10.0.0.1/8` is refused: did you mean `10.0.0.0/8`?).
 * - IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is the IPv4 address, as an entry and as a client; IPv4-compatible
 *   (`::a.b.c.d`) and IPv4-translated (`::ffff:0:a.b.c.d`) are IPv6 addresses and never match an IPv4 entry.
 * No surrounding whitespace: callers that read user lists trim each item first.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const IPV6_CHARS = /^[0-9A-Fa-f:.]+$/;
const PREFIX = /^(?:0|[1-9][0-9]{0,2})$/;

/** A canonical IPv4 or IPv6 address (see above), IPv4-mapped IPv6 unwrapped to IPv4; `null` otherwise. */
export function parseAddress(text: string): Address | null {
  if (IPV4.test(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(":") || !IPV6_CHARS.test(text)) return null;
  const groups = text.split(":");
  const tail = groups.at(-1) ?? "";
  if (groups.some((group) => !group.includes(".") && group.length > 4)) return null;
  // A dotted tail becomes two hex groups here: ipaddr.js would read `::a.b.c.d` as IPv4-mapped `::ffff:a.b.c.d`.
  let hex = text;
  if (tail.includes(".")) {
    if (!IPV4.test(tail)) return null;
    const [a = 0, b = 0, c = 0, d = 0] = tail.split(".").map(Number);
    hex = `${text.slice(0, -tail.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  if (!ipaddr.IPv6.isValid(hex)) return null;
  return ipaddr.process(hex);
}

/** Why an allowlist entry is refused, or `null` if it is a canonical address or CIDR block. */
export function allowEntryProblem(entry: string): string | null {
  return parseEntry(entry).problem;
}

/** An allowlist entry as a range; `null` if it is not canonical. */
export function parseAllowEntry(entry: string): Range | null {
  return parseEntry(entry).range;
}

function parseEntry(entry: string): { range: Range; problem: null } | { range: null; problem: string } {
  const refuse = (problem: string) => ({ range: null, problem }) as const;
  const [address = "", bits, ...more] = entry.split("/");
  const parsed = parseAddress(address);
  if (!parsed || more.length > 0) {
    return refuse(
      `Not an IP address or CIDR block: ${entry} (IPv4 as four decimal octets such as 203.0.113.7, IPv6 without a zone id, optional /prefix)`,
    );
  }
  // An IPv4-mapped block is written with an IPv6 prefix: /96 and more cover IPv4 addresses only.
  const mapped = parsed.kind() === "ipv4" && address.includes(":");
  const max = parsed.kind() === "ipv4" ? 32 : 128;
  if (bits === undefined) return { range: [parsed, max], problem: null };
  const fullBits = mapped ? 128 : max;
  if (!PREFIX.test(bits) || Number(bits) > fullBits || (mapped && Number(bits) < 96)) {
    return refuse(`Not a valid prefix length in ${entry}: a whole number from ${mapped ? 96 : 0} to ${fullBits}`);
  }
  const prefix = mapped ? Number(bits) - 96 : Number(bits);
  const network = networkAddress(parsed, prefix);
  if (network.toString() !== parsed.toString()) {
    return refuse(
      `${entry} has bits set after the /${bits} prefix: did you mean ${mapped ? `::ffff:${network}` : network}/${bits}?`,
    );
  }
  return { range: [parsed, prefix], problem: null };
}

function networkAddress(address: Address, prefix: number): Address {
  return address.kind() === "ipv4"
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${prefix}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${prefix}`);
}

/** Normalizes allowlist entries for storage (`address/prefix`, IPv6 compressed); throws on the first invalid one. */
export function normalizeAllowlist(entries: readonly string[]): string[] {
  return entries.map((entry) => {
    const { range, problem } = parseEntry(entry);
    if (!range) throw new Error(problem);
    return `${range[0].toString()}/${range[1]}`;
  });
}

/** An empty allowlist admits every address; otherwise the client address must fall in one entry. */
export function isIpAllowed(allowlist: readonly string[], clientIp: string | undefined): boolean {
  if (allowlist.length === 0) return true;
  const addr = clientIp ? parseAddress(clientIp) : null;
  if (!addr) return false;
  return allowlist.some((entry) => {
    const range = parseAllowEntry(entry);
    return range !== null && range[0].kind() === addr.kind() && addr.match(range);
  });
}
