/**
 * SSRF guard for upstream URLs that organizations configure (custom providers, BYOK base URLs).
 *
 * In production only public unicast destinations are accepted: loopback, private, link-local
 * (incl. cloud metadata 169.254.169.254), CGNAT, unique-local, multicast, unspecified and other
 * reserved ranges are refused, as are `localhost`/`*.localhost`, `*.internal`/`*.local` and
 * single-label names. The WHATWG URL parser already normalises the decimal, octal, hex and short
 * IPv4 spellings (`http://2130706433`, `http://0177.1`, `http://0x7f.0.0.1`) to dotted quads, and
 * IPv4-mapped / NAT64 / 6to4 IPv6 forms are judged by the IPv4 address they carry (or refused);
 * IPv4-compatible IPv6 (`[::127.0.0.1]`) and host names with empty labels (`localhost..`) are
 * refused. Upstream fetches never follow redirects (`redirect: "manual"`, a 3xx is an error).
 * In development and test (`ENVIRONMENT` not `production`) loopback is allowed so local stand-ins
 * work. Hostnames are not resolved here; a public name that resolves to a private address is
 * stopped by the Workers runtime, which cannot reach private networks.
 */
import ipaddr from "ipaddr.js";

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export interface UrlPolicy {
  production: boolean;
}

const BLOCKED_SUFFIXES = [".localhost", ".local", ".internal", ".localdomain", ".home.arpa"];

/** Why an IP literal is not an acceptable upstream, or null when it is public unicast. */
export function blockedIpReason(literal: string): string | null {
  if (!ipaddr.isValid(literal)) return null;
  let addr = ipaddr.parse(literal);
  if (addr.kind() === "ipv6") {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) addr = v6.toIPv4Address();
  }
  const range = addr.range();
  if (range !== "unicast") return `addresses in the ${range} range are not allowed`;
  // IPv4-compatible (deprecated ::a.b.c.d, RFC 4291 2.5.5.1, e.g. [::127.0.0.1], [::a9fe:a9fe]):
  // never a legitimate upstream, and some stacks route it to the embedded IPv4 address.
  if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return "IPv4-compatible IPv6 addresses are not allowed";
  return null;
}

/** Validates an upstream base URL: scheme, credentials-free, and (in production) a public host. */
export function checkUpstreamUrl(raw: string, policy: UrlPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "must be an absolute URL" };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && !policy.production)) {
    return { ok: false, reason: policy.production ? "must use https" : "must use http or https" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not contain credentials" };
  if (!policy.production) return { ok: true, url };

  // One trailing dot is the fully qualified spelling of the same name; more, or an empty label,
  // is a spelling resolvers may still map onto a blocked name (`localhost..`).
  if (/\.\.|^\./.test(url.hostname)) return { ok: false, reason: `host '${url.hostname}' is not a valid domain name` };
  const host = url.hostname.replace(/\.$/, "").toLowerCase();
  const literal = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (ipaddr.isValid(literal)) {
    const reason = blockedIpReason(literal);
    return reason ? { ok: false, reason } : { ok: true, url };
  }
  if (host === "localhost" || BLOCKED_SUFFIXES.some((s) => host.endsWith(s)) || host === "metadata.google.internal") {
    return { ok: false, reason: `host '${host}' is not allowed` };
  }
  if (!host.includes(".")) return { ok: false, reason: `host '${host}' is not a public domain name` };
  return { ok: true, url };
}

/**
 * A URL an upstream named in its answer (a generated image's result link), not one anybody
 * configured: fetched only when it is a public `https` URL (the production rule, in every
 * environment), or on the very origin of the base URL the request went to (the operator's
 * `<ID>_BASE_URL`, or an organization's, which passed `checkUpstreamUrl` when it was set; in tests
 * that is the fake upstream on loopback). Any other loopback, private or metadata address is refused.
 */
export function checkNamedUrl(raw: string, baseUrl: string): UrlCheck {
  const open = checkUpstreamUrl(raw, { production: true });
  if (open.ok) return open;
  try {
    const url = new URL(raw);
    const base = new URL(baseUrl);
    if ((url.protocol === "http:" || url.protocol === "https:") && !url.username && !url.password && url.origin === base.origin) return { ok: true, url };
  } catch {
    // not a URL: the reason below
  }
  return open;
}
