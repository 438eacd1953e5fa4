/**
 * The client credentials grant: a client bound to the key that registered it, the scopes it may
 * ask for, and the token endpoint's answers to unusual parameters and bodies (RFC 6749).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { issueTokens, resolveAccessToken } from "../../src/oauth/tokens";
import { authorizeParams, publicClient, register, token, type TokenResponse } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

describe("client credentials", () => {
  it("binds the client to the registering key and issues tokens for it", async () => {
    const noKey = await register({ grant_types: ["client_credentials"], client_name: "svc" });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: "invalid_client" });
    const publicCc = await register({ grant_types: ["client_credentials"], token_endpoint_auth_method: "none" }, org.key);
    expect(publicCc.status).toBe(400);

    const res = await register({ grant_types: ["client_credentials"], client_name: "svc" }, org.key);
    expect(res.status).toBe(201);
    const client = (await res.json()) as { client_id: string; client_secret: string };
    const basic = `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`;

    const ok = await token({ grant_type: "client_credentials" }, { authorization: basic });
    expect(ok.status).toBe(200);
    const t = (await ok.json()) as TokenResponse;
    expect(t.refresh_token).toBeUndefined();
    expect(await resolveAccessToken(env, t.access_token)).toMatchObject({ apiKeyId: org.keyId, clientId: client.client_id });

    const post = await token({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret });
    expect(post.status).toBe(200);

    const wrong = await token({ grant_type: "client_credentials" }, { authorization: `Basic ${btoa(`${client.client_id}:nope`)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/^Basic/);
    expect(await wrong.json()).toMatchObject({ error: "invalid_client" });

    const codeGrant = await token({ grant_type: "authorization_code", code: "x", code_verifier: "y" }, { authorization: basic });
    expect(await codeGrant.json()).toMatchObject({ error: "unauthorized_client" });
  });

  it("grants the supported scopes a client asks for, refuses requests naming none, and /mcp needs 'mcp'", async () => {
    const res = await register({ grant_types: ["client_credentials"], client_name: "scoped" }, org.key);
    const client = (await res.json()) as { client_id: string; client_secret: string };
    const basic = { authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}` };

    const mixed = await token({ grant_type: "client_credentials", scope: "openid mcp profile" }, basic);
    expect(mixed.status).toBe(200);
    const granted = (await mixed.json()) as TokenResponse;
    expect(granted.scope).toBe("mcp");
    expect(await resolveAccessToken(env, granted.access_token)).toMatchObject({ scope: "mcp" });

    const none = await token({ grant_type: "client_credentials", scope: "admin" }, basic);
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({ error: "invalid_scope" });

    const clientId = await publicClient();
    const refused = await call(`/oauth/authorize?${new URLSearchParams({ ...authorizeParams(clientId, "a".repeat(43)), scope: "admin" })}`, { redirect: "manual" });
    expect(refused.status).toBe(302);
    expect(new URL(refused.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope");

    // A token whose grant lacks 'mcp' (issued by a future scope, or tampered rows) cannot use /mcp.
    const other = await issueTokens(env, { clientId: client.client_id, apiKeyId: org.keyId, scope: "analytics", refresh: false });
    const headers = { accept: "application/json, text/event-stream", "content-type": "application/json" };
    const denied = await call("/mcp", { method: "POST", key: other.access_token, headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="mcp"');
    const allowed = await call("/mcp", { method: "POST", key: granted.access_token, headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    expect(allowed.status).toBe(200);
  });

  it("ignores unrecognized parameters, also ones named after Object.prototype members, and refuses repeated ones (RFC 6749 3.1, 3.2)", async () => {
    const res = await register({ grant_types: ["client_credentials"], client_name: "extra params" }, org.key);
    const client = (await res.json()) as { client_id: string; client_secret: string };
    const basic = { authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}` };
    for (const name of ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty", "unknown_param"]) {
      const ok = await token({ grant_type: "client_credentials", [name]: "x" }, basic);
      expect(ok.status, `${name}: ${await ok.clone().text()}`).toBe(200);
    }
    const repeated = await call("/oauth/token", { method: "POST", body: "grant_type=client_credentials&grant_type=client_credentials", headers: { "content-type": "application/x-www-form-urlencoded", ...basic } });
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({ error: "invalid_request", error_description: "Parameter 'grant_type' is repeated." });
  });

  it("reports unsupported grant types and non-form bodies per RFC 6749", async () => {
    const res = await token({ grant_type: "password", username: "a", password: "b" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "unsupported_grant_type" });
    const text = await call("/oauth/token", { method: "POST", body: "grant_type=client_credentials", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({ error: "invalid_request" });
  });
});

