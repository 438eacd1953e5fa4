/**
 * Strict IP / CIDR parsing for IP rules (spec 2.2, 5.7) on top of ipaddr.js. Only canonical forms
 * are accepted: dotted-quad IPv4 and standard IPv6 (no zone ids), always with an explicit prefix
 * length in rules (a single address is written /32 or /128).
 */
import ipaddr from "ipaddr.js";

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

export interface Cidr {
  kind: "ipv4" | "ipv6";
  addr: IpAddress;
  bits: number;
  text: string;
}

/** Parses `10.0.0.0/8` or `2001:db8::/32`; null for anything else (including bare addresses). */
export function parseCidr(text: string): Cidr | null {
  const s = text.trim();
  const slash = s.lastIndexOf("/");
  if (slash <= 0) return null;
  const host = s.slice(0, slash);
  const bitsText = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  try {
    if (host.includes(":")) {
      if (host.includes("%") || !ipaddr.IPv6.isValid(host)) return null;
      const [addr, bits] = ipaddr.IPv6.parseCIDR(s);
      return { kind: "ipv6", addr, bits, text: s };
    }
    if (!ipaddr.IPv4.isValidCIDRFourPartDecimal(s)) return null;
    const [addr, bits] = ipaddr.IPv4.parseCIDR(s);
    return { kind: "ipv4", addr, bits, text: s };
  } catch {
    return null;
  }
}

/** Parses a client address; IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes IPv4. Null when invalid. */
export function parseIp(text: string): IpAddress | null {
  const s = text.trim();
  if (!s) return null;
  try {
    if (s.includes(":")) {
      if (s.includes("%") || !ipaddr.IPv6.isValid(s)) return null;
      const v6 = ipaddr.IPv6.parse(s);
      return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
    }
    return ipaddr.IPv4.isValidFourPartDecimal(s) ? ipaddr.IPv4.parse(s) : null;
  } catch {
    return null;
  }
}

export function ipInCidr(ip: IpAddress, cidr: Cidr): boolean {
  if (ip.kind() !== cidr.kind) return false;
  return ip.match(cidr.addr, cidr.bits);
}

/**
 * The client IP for IP rules: the first entry of `X-Forwarded-For` (spec 5.7), trimmed.
 * Returns null when the header is missing or its first entry is not an IP address.
 */
export function clientIpFromForwardedFor(header: string | null | undefined): string | null {
  if (!header) return null;
  const comma = header.indexOf(",");
  return canonicalIp((comma < 0 ? header : header.slice(0, comma)).trim());
}

/** A dotted quad already in canonical form (no leading zeros, each part <= 255): the common case. */
const CANONICAL_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** The canonical text of a client address, or null when it is not one. */
function canonicalIp(text: string): string | null {
  if (CANONICAL_IPV4.test(text)) return text;
  const ip = parseIp(text);
  return ip ? ip.toString() : null;
}

/**
 * The client IP (contract section 6): `CF-Connecting-IP` when present (Cloudflare's edge sets it
 * and a client cannot forge it), otherwise the first `X-Forwarded-For` entry (a proxy that
 * overwrites it, local runs, tests), otherwise null: undetermined, which an allow rule denies.
 * A present but unparsable `CF-Connecting-IP` is undetermined too, never a reason to trust XFF.
 */
export function clientIpOf(headers: Headers): string | null {
  const cf = headers.get("cf-connecting-ip");
  if (cf !== null) return canonicalIp(cf.trim());
  return clientIpFromForwardedFor(headers.get("x-forwarded-for"));
}
