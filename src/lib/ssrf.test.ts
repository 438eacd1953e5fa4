import { describe, expect, it } from "vitest";
import { blockedIpReason, checkUpstreamUrl } from "./ssrf";

const prod = { production: true };
const dev = { production: false };

describe("checkUpstreamUrl (production)", () => {
  it.each([
    "https://127.0.0.1/v1",
    "https://127.1/v1",
    "https://2130706433/v1",
    "https://0177.0.0.1/v1",
    "https://0x7f.0.0.1/v1",
    "https://0x7f000001/v1",
    "https://10.0.0.8/v1",
    "https://172.16.3.4/v1",
    "https://192.168.1.1/v1",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.0.1/",
    "https://0.0.0.0/",
    "https://[::1]/v1",
    "https://[::]/v1",
    "https://[fe80::1]/v1",
    "https://[fd00:ec2::254]/",
    "https://[fc00::1]/",
    "https://[::ffff:127.0.0.1]/v1",
    "https://[::ffff:a9fe:a9fe]/",
    "https://[64:ff9b::7f00:1]/",
    "https://localhost/v1",
    "https://LOCALHOST./v1",
    "https://api.localhost/v1",
    "https://metadata.google.internal/computeMetadata/v1",
    "https://intranet/v1",
    // Double trailing dot, empty labels, IPv4-compatible IPv6.
    "https://localhost../v1",
    "https://metadata.google.internal../computeMetadata/v1",
    "https://api..example.com/v1",
    "https://[::127.0.0.1]/v1",
    "https://[::a9fe:a9fe]/latest/meta-data",
    "https://[::8.8.8.8]/v1",
  ])("refuses %s", (url) => {
    const r = checkUpstreamUrl(url, prod);
    expect(r.ok).toBe(false);
  });

  it.each(["https://api.example.com/v1", "https://api.example.com./v1", "https://8.8.8.8/v1", "https://[2606:4700:4700::1111]/v1", "https://example.com:8443/openai"])(
    "accepts %s",
    (url) => {
      expect(checkUpstreamUrl(url, prod)).toMatchObject({ ok: true });
    },
  );

  it("requires https and no credentials", () => {
    expect(checkUpstreamUrl("http://api.example.com/v1", prod)).toEqual({ ok: false, reason: "must use https" });
    expect(checkUpstreamUrl("https://u:p@api.example.com/v1", prod).ok).toBe(false);
    expect(checkUpstreamUrl("ftp://api.example.com", prod).ok).toBe(false);
    expect(checkUpstreamUrl("not a url", prod).ok).toBe(false);
  });
});

describe("checkUpstreamUrl (development/test)", () => {
  it("allows loopback over http for local stand-ins", () => {
    expect(checkUpstreamUrl("http://127.0.0.1:8790/openai", dev).ok).toBe(true);
    expect(checkUpstreamUrl("http://localhost:8790", dev).ok).toBe(true);
    expect(checkUpstreamUrl("ftp://localhost", dev).ok).toBe(false);
  });
});

describe("blockedIpReason", () => {
  it("names the range of blocked literals and passes public ones", () => {
    expect(blockedIpReason("10.1.2.3")).toMatch(/private/);
    expect(blockedIpReason("::1")).toMatch(/loopback/);
    expect(blockedIpReason("::7f00:1")).toMatch(/IPv4-compatible/);
    expect(blockedIpReason("1.1.1.1")).toBeNull();
    expect(blockedIpReason("not-an-ip")).toBeNull();
  });
});
