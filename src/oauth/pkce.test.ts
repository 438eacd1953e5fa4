import { describe, expect, it } from "vitest";
import { s256Challenge, verifyPkce } from "./pkce";

describe("PKCE S256", () => {
  it("matches the RFC 7636 Appendix B example", async () => {
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    expect(await s256Challenge(verifier)).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    expect(await verifyPkce(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")).toBe(true);
  });

  it("rejects other verifiers and malformed ones", async () => {
    expect(await verifyPkce("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")).toBe(false);
    expect(await verifyPkce("short", await s256Challenge("short"))).toBe(false);
  });
});
