import ipaddr from "ipaddr.js";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An address with IPv4-mapped IPv6 (`::ffff:a.b.c.d`) unwrapped to IPv4; `null` if it is not an IP address. */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const trimmed = text.trim().replace(/^\[(.*)\]$/, "$1");
  if (!ipaddr.isValid(trimmed)) return null;
  return ipaddr.process(trimmed);
}

/** An allowlist entry (an address or a CIDR block) as a range; `null` if it is neither. */
export function parseAllowEntry(entry: string): Range | null {
  const text = entry.trim();
  if (text.includes("/")) {
    try {
      const [addr, bits] = ipaddr.parseCIDR(text);
      if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
      }
      return [addr, bits];
    } catch {
      return null;
    }
  }
  const addr = parseAddress(text);
  return addr ? [addr, addr.kind() === "ipv4" ? 32 : 128] : null;
}

/** Normalizes allowlist entries for storage; throws on the first invalid one. */
export function normalizeAllowlist(entries: readonly string[]): string[] {
  return entries.map((entry) => {
    const range = parseAllowEntry(entry);
    if (!range) throw new Error(`Not an IP address or CIDR block: ${entry}`);
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
