import type ipaddr from "ipaddr.js";
import { parseAddress } from "../../lib/ip-allowlist.ts";

/** The one bucket of requests that carry no usable `CF-Connecting-IP` (local development and tests: Cloudflare always sets it). */
export const UNKNOWN_CLIENT_BUCKET = "ip:unknown";

/**
 * The rate-limit bucket (the Durable Object's name) of a client address, read from `CF-Connecting-IP` as strictly as
 * the IP allowlists read it: `ip:203.0.113.7` for IPv4 (IPv4-mapped IPv6 included), `ip:2001:db8:1:2::/64` for IPv6,
 * whose /64 one subscriber usually holds whole (a bucket per address would let one client spread over 2^64 of them),
 * and `ip:unknown` without a canonical address. Key buckets are named by key id (`key_…`), never `ip:…`.
 */
export function clientBucket(header: string | undefined): string {
  const address = header === undefined ? null : parseAddress(header);
  if (!address) return UNKNOWN_CLIENT_BUCKET;
  if (address.kind() === "ipv4") return `ip:${address.toString()}`;
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `ip:${prefix.join(":")}::/64`;
}
