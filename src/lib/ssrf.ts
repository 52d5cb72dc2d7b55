import ipaddr from "ipaddr.js";
import { hasUserinfo, urlTextProblem } from "./url-rules.ts";

/**
 * SSRF guard for upstream URLs (`baseUrl`, `targetUrl`): a pure check of the URL text, no I/O.
 *
 * WHATWG `new URL()` parses first, so every spelling a fetch would accept (2130706433, 0x7f.1, 0177.0.0.1,
 * 127.1, %31%32%37.0.0.1, full-width digits, a trailing dot) is already the dotted IPv4 `127.0.0.1`, and
 * IPv6 is compressed inside brackets. The normalized hostname is then classified as an IP literal or a name.
 *
 * Text with whitespace, control characters or a backslash is refused before parsing (see url-rules.ts), and the
 * caller stores `url.href`, the form that was checked.
 *
 * Names that resolve to private addresses (`*.nip.io`, DNS rebinding, redirects) cannot be caught here without
 * DNS: the request-time path must fetch with `redirect: "manual"` and re-check every hop.
 */

export type SsrfReason =
  | "invalid_url" // not an absolute URL
  | "scheme_not_allowed" // not http: or https:
  | "userinfo_not_allowed" // a user name or password before the host, even empty (`http://@host/`)
  | "port_not_allowed" // port 0
  | "blocked_hostname" // localhost, an internal suffix, a single label
  | "private_address"; // an IP literal in a denied range

export type SsrfCheck = { allowed: true; url: URL } | { allowed: false; reason: SsrfReason; message: string };

// The IANA special-purpose registries, as explicit ranges: ipaddr.js calls some of them (::7f00:1,
// 168.63.129.16) plain "unicast", so its range names are not used.
const DENIED_IPV4 = [
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // private
  "100.64.0.0/10", // carrier-grade NAT (also Alibaba metadata 100.100.100.200)
  "127.0.0.0/8", // loopback
  "168.63.129.16/32", // Azure wire server
  "169.254.0.0/16", // link-local, cloud metadata
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation
  "192.31.196.0/24", // AS112
  "192.52.193.0/24", // AMT
  "192.88.99.0/24", // 6to4 relay anycast
  "192.168.0.0/16", // private
  "192.175.48.0/24", // AS112
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

// IPv4-mapped addresses (::ffff:0:0/96) are not listed: they are unwrapped and checked as IPv4.
const DENIED_IPV6 = [
  // Everything outside global unicast 2000::/3 is special (IANA IPv6 Address Space: unique local, link-local,
  // multicast, or "Reserved by IETF"); the explicit blocks inside ::/3 and fc00::/7.. below name what they are.
  "::/3",
  "4000::/2",
  "8000::/1",
  "::/128", // unspecified
  "::1/128", // loopback
  "::/96", // IPv4-compatible (deprecated)
  "::ffff:0:0:0/96", // IPv4-translated (SIIT, RFC 2765)
  "64:ff9b::/96", // NAT64
  "64:ff9b:1::/48", // local-use NAT64
  "100::/64", // discard-only
  "100:0:0:1::/64", // dummy prefix (RFC 9780)
  "2001::/23", // IETF protocol assignments, Teredo (2001::/32)
  "2001:db8::/32", // documentation
  "2002::/16", // 6to4
  "2620:4f:8000::/48", // AS112 direct delegation
  "3fff::/20", // documentation
  "5f00::/16", // segment routing
  "fc00::/7", // unique local (AWS metadata fd00:ec2::254)
  "fe80::/10", // link-local
  "fec0::/10", // site-local (deprecated)
  "ff00::/8", // multicast
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

// `localhost` itself is a single label; `home.arpa` is the one suffix with two.
const DENIED_SUFFIXES = ["localhost", "internal", "local", "localdomain", "home.arpa"];

/** Options of the check. `allowLoopback`: this machine (127.0.0.0/8, `[::1]`, `localhost`) passes, nothing else private. */
export interface SsrfOptions {
  allowLoopback?: boolean;
}

const LOOPBACK_V4 = ipaddr.IPv4.parseCIDR("127.0.0.0/8");

export function checkUpstreamUrl(input: string, options: SsrfOptions = {}): SsrfCheck {
  // WHATWG parsing drops TAB/CR/LF and reads `\` as `/`; other parsers do not, so such text is never accepted.
  if (urlTextProblem(input)) {
    return deny("invalid_url", "The URL must not contain whitespace, control characters or a backslash.");
  }
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return deny("invalid_url", "The URL must be an absolute http or https URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return deny("scheme_not_allowed", "Only http and https URLs are allowed.");
  }
  // `http://@host/` and `http://:@host/` parse with an empty user name and password: the `@` is in the text only.
  if (url.username !== "" || url.password !== "" || hasUserinfo(input)) {
    return deny("userinfo_not_allowed", "The URL must not contain a user name or password.");
  }
  if (url.port === "0") return deny("port_not_allowed", "Port 0 is not a port a server listens on.");

  const host = url.hostname;
  if (options.allowLoopback && isLoopback(host)) return { allowed: true, url };
  if (host.startsWith("[")) {
    if (isDeniedAddress(ipaddr.IPv6.parse(host.slice(1, -1)))) return denyAddress(host);
  } else if (isFourPartDecimal(host)) {
    if (isDeniedAddress(ipaddr.IPv4.parse(host))) return denyAddress(host);
  } else if (isDeniedName(host)) {
    return deny("blocked_hostname", `The host ${host} is a local, internal or single-label name.`);
  }
  return { allowed: true, url };
}

/** `localhost`, an address of 127.0.0.0/8 (also IPv4-mapped) or `[::1]`, as WHATWG parsing leaves them. */
function isLoopback(host: string): boolean {
  if (host === "localhost" || host === "localhost.") return true;
  if (isFourPartDecimal(host)) return ipaddr.IPv4.parse(host).match(LOOPBACK_V4);
  if (!host.startsWith("[")) return false;
  const address = ipaddr.IPv6.parse(host.slice(1, -1));
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().match(LOOPBACK_V4);
  return address.range() === "loopback";
}

/**
 * ipaddr.js's `isValidFourPartDecimal`, its pattern first: the library tells a name from an address by a thrown parse
 * error, which costs more than the whole check for the names nearly every upstream has.
 */
const FOUR_PART_DECIMAL = /^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/;
const isFourPartDecimal = (host: string) => FOUR_PART_DECIMAL.test(host) && ipaddr.IPv4.isValid(host);

function isDeniedAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address instanceof ipaddr.IPv4) return DENIED_IPV4.some((range) => address.match(range));
  if (address.isIPv4MappedAddress()) return isDeniedAddress(address.toIPv4Address());
  return DENIED_IPV6.some((range) => address.match(range));
}

function isDeniedName(hostname: string): boolean {
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  const labels = name.split(".");
  if (labels.length < 2 || labels.includes("")) return true;
  return DENIED_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

function denyAddress(host: string): SsrfCheck {
  return deny("private_address", `The host ${host} is in a private or reserved IP range.`);
}

function deny(reason: SsrfReason, message: string): SsrfCheck {
  return { allowed: false, reason, message };
}
