import { describe, expect, it } from "vitest";
import { clientIpFromForwardedFor, clientIpOf, parseCidr, parseIp } from "./cidr";

describe("parseCidr", () => {
  it("accepts IPv4 and IPv6 CIDRs with explicit prefix", () => {
    expect(parseCidr("10.0.0.0/8")).toMatchObject({ kind: "ipv4", bits: 8 });
    expect(parseCidr("192.168.1.1/32")).toMatchObject({ kind: "ipv4", bits: 32 });
    expect(parseCidr("2001:db8::/32")).toMatchObject({ kind: "ipv6", bits: 32 });
    expect(parseCidr("::1/128")).toMatchObject({ kind: "ipv6", bits: 128 });
  });

  it("rejects bare addresses, bad prefixes and non-canonical forms", () => {
    for (const bad of ["10.0.0.1", "2001:db8::1", "10.0.0.0/33", "2001:db8::/129", "10.0.0/8", "0x0a.0.0.0/8", "10.0.0.0/", "/8", "fe80::1%eth0/64", "hello", "10.0.0.256/8", "10.0.0.0/8/8"]) {
      expect(parseCidr(bad), bad).toBeNull();
    }
  });
});

describe("client IP", () => {
  it("is the first X-Forwarded-For entry, trimmed", () => {
    expect(clientIpFromForwardedFor(" 203.0.113.7 , 10.0.0.1")).toBe("203.0.113.7");
    expect(clientIpFromForwardedFor("2001:db8::5, 10.0.0.1")).toBe("2001:db8::5");
  });

  it("is unknown when missing or invalid", () => {
    expect(clientIpFromForwardedFor(undefined)).toBeNull();
    expect(clientIpFromForwardedFor("")).toBeNull();
    expect(clientIpFromForwardedFor("unknown, 10.0.0.1")).toBeNull();
    expect(clientIpFromForwardedFor("1.2.3.4:5678")).toBeNull();
    expect(parseIp("999.1.1.1")).toBeNull();
  });
});

describe("clientIpOf (contract section 6)", () => {
  const h = (init: Record<string, string>) => new Headers(init);
  it("prefers CF-Connecting-IP over a client-sent X-Forwarded-For", () => {
    expect(clientIpOf(h({ "cf-connecting-ip": "198.51.100.9", "x-forwarded-for": "10.1.2.3" }))).toBe("198.51.100.9");
  });
  it("falls back to the first X-Forwarded-For entry, else undetermined", () => {
    expect(clientIpOf(h({ "x-forwarded-for": "10.1.2.3, 192.0.2.1" }))).toBe("10.1.2.3");
    expect(clientIpOf(h({}))).toBeNull();
  });
  it("an unparsable CF-Connecting-IP is undetermined, never X-Forwarded-For", () => {
    expect(clientIpOf(h({ "cf-connecting-ip": "garbage", "x-forwarded-for": "10.1.2.3" }))).toBeNull();
  });
});

describe("client address fast path", () => {
  it("gives exactly what the full parser gives, for canonical quads and every other spelling", () => {
    const inputs = [
      "1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.1", "192.168.001.1", "01.2.3.4", "256.1.1.1", "1.2.3", "1.2.3.4.5",
      "1.2.3.4 ", "::ffff:1.2.3.4", "2001:db8::1", "2001:DB8:0:0:0:0:0:1", "fe80::1%eth0", "0x7f.0.0.1", "1e2.0.0.1", "", "a.b.c.d",
    ];
    for (let i = 0; i < 300; i++) inputs.push(Array.from({ length: 4 }, () => String(Math.floor(Math.random() * 300))).join("."));
    for (const text of inputs) {
      const full = parseIp(text.trim())?.toString() ?? null;
      expect(clientIpFromForwardedFor(`${text}, 10.9.9.9`), text).toBe(full);
      expect(clientIpOf(new Headers({ "cf-connecting-ip": text })), text).toBe(full);
    }
  });
});
