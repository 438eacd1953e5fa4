/**
 * OAuth hardening: login CSRF on the sign-in form, codes and refresh tokens not burnt by wrong
 * guesses, the issuer named from PUBLIC_URL only, 401s that name the scope, and the organization
 * chosen on the consent page.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { s256Challenge } from "../../src/oauth/pkce";
import worker from "../../src/index";
import { authorize, authorizeParams, csrfOf, keyOptions, pkce, publicClient, signIn, token, type TokenResponse } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

describe("hardening", () => {
  it("refuses a cross-site post of the sign-in form (login CSRF)", async () => {
    const clientId = await publicClient();
    const params = authorizeParams(clientId, await s256Challenge("x".repeat(43)));
    const res = await call("/oauth/authorize", {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams({ ...params, action: "sign_in", email: org.ownerEmail, password: org.ownerPassword }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("a wrong client_id or verifier does not burn the code or the refresh token", async () => {
    const clientId = await publicClient();
    const otherClient = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorize(org, clientId, await challenge, org.keyId);
    expect((await token({ grant_type: "authorization_code", code, code_verifier: "wrong-verifier-".padEnd(50, "x"), client_id: clientId })).status).toBe(400);
    expect((await token({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: otherClient })).status).toBe(400);
    const ok = await token({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId });
    expect(ok.status).toBe(200);
    const tokens = (await ok.json()) as TokenResponse;
    expect((await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token!, client_id: otherClient })).status).toBe(400);
    expect((await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token!, client_id: clientId })).status).toBe(200);
  });

  it("discovery names the configured PUBLIC_URL, never the Host header; one issuer (RFC 8414 3.3)", async () => {
    const patched = Object.create(env, { PUBLIC_URL: { value: "https://gateway.example.com/", enumerable: true } }) as typeof env;
    const get = async (path: string) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(new Request(`http://evil.example${path}`), patched, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
    expect(await (await get("/.well-known/oauth-authorization-server")).json()).toMatchObject({
      issuer: "https://gateway.example.com",
      token_endpoint: "https://gateway.example.com/oauth/token",
    });
    expect(await (await get("/.well-known/oauth-protected-resource/mcp")).json()).toMatchObject({
      resource: "https://gateway.example.com/mcp",
      authorization_servers: ["https://gateway.example.com"],
    });
    // The path-suffixed copy would have to name issuer <origin>/mcp: it is not served.
    expect((await call("/.well-known/oauth-authorization-server/mcp")).status).toBe(404);
  });

  it("a 401 without credentials has no invalid_token error but names the scope", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const none = await call("/mcp", { method: "POST", body: JSON.stringify(init), headers });
    expect(none.status).toBe(401);
    const challenge = none.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer resource_metadata="http:\/\/gw\.test\/\.well-known\/oauth-protected-resource"/);
    expect(challenge).toContain('scope="mcp"');
    expect(challenge).not.toContain("error=");
    const bad = await call("/mcp", { method: "POST", body: JSON.stringify(init), headers: { ...headers, authorization: "Bearer swbo_at_nope" } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("a user in several organizations picks the organization on the consent page", async () => {
    const { bootstrapOrganization } = await import("../../src/organizations/bootstrap");
    const second = await bootstrapOrganization(env, { name: "Second Org", plan: "pro", owner: { email: org.ownerEmail, name: "Owner", password: org.ownerPassword } });
    // Sign-in opens the oldest membership. Creation times have whole seconds: a second membership
    // made in the same second as the first would tie, and the tie is broken by random ids.
    await env.DB.prepare("UPDATE members SET created_at = created_at + 1000 WHERE organization_id = ?").bind(second.organization.id).run();
    const clientId = await publicClient();
    const params = authorizeParams(clientId, await pkce().challenge);
    const cookie = await signIn(org, params);
    const page = await (await call(`/oauth/authorize?${new URLSearchParams(params)}`, { headers: { cookie } })).text();
    expect(page).toContain('name="organization_id"');
    expect(page).toContain("Second Org");
    expect(keyOptions(page)).toContain(org.keyId);
    expect(keyOptions(page)).not.toContain(second.playgroundKey.id);

    const csrf = csrfOf(page)!;
    const switched = await call("/oauth/authorize", {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...params, action: "switch_org", csrf_token: csrf, organization_id: second.organization.id }).toString(),
    });
    expect(switched.status).toBe(303);
    const next = (switched.headers.get("set-cookie") ?? "").split(";")[0]!;
    const page2 = await (await call(`/oauth/authorize?${new URLSearchParams(params)}`, { headers: { cookie: next } })).text();
    expect(keyOptions(page2)).not.toContain(org.keyId);
    // An organization the user does not belong to is refused.
    const other = await seedOrg();
    const refused = await call("/oauth/authorize", {
      method: "POST",
      redirect: "manual",
      headers: { cookie: next, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...params, action: "switch_org", csrf_token: csrfOf(page2)!, organization_id: other.orgId }).toString(),
    });
    expect(refused.status).toBe(400);
  });
});
