/**
 * OAuth 2.1 for MCP clients: the authorization server and protected resource metadata, and dynamic
 * client registration (unsafe redirect URIs and grant types refused, secrets for confidential clients).
 */
import { describe, expect, it } from "vitest";
import { call } from "../helpers/fixtures";
import { REDIRECT, register } from "./helpers";

describe("discovery", () => {
  it("publishes authorization server and protected resource metadata", async () => {
    const as = (await (await call("/.well-known/oauth-authorization-server")).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer: "http://gw.test",
      authorization_endpoint: "http://gw.test/oauth/authorize",
      token_endpoint: "http://gw.test/oauth/token",
      registration_endpoint: "http://gw.test/oauth/register",
      revocation_endpoint: "http://gw.test/oauth/revoke",
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    });
    const preflight = await call("/oauth/token", { method: "OPTIONS", headers: { origin: "https://inspector.example", "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(await res.json()).toMatchObject({ resource: "http://gw.test/mcp", authorization_servers: ["http://gw.test"] });
    }
  });
});

describe("registration", () => {
  it("rejects unsafe redirect URIs and unknown grant types", async () => {
    for (const uri of ["http://evil.example/cb", "javascript:alert(1)", "https://ok.example/cb#frag", "not a url"]) {
      const res = await register({ redirect_uris: [uri], token_endpoint_auth_method: "none" });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_redirect_uri" });
    }
    const bad = await register({ redirect_uris: [REDIRECT], grant_types: ["password"] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "invalid_client_metadata" });
  });

  it("returns a secret for confidential clients", async () => {
    const res = await register({ redirect_uris: ["https://app.example/cb", "http://localhost:8080/cb"] });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.client_secret).toMatch(/^swbo_cs_/);
    expect(body.token_endpoint_auth_method).toBe("client_secret_basic");
    expect(body.grant_types).toEqual(["authorization_code", "refresh_token"]);
  });
});

