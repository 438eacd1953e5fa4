import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { addKey, call, seedOrg, TEST_SECRETS, type SeededOrg } from "./helpers/fixtures";
import { getDb } from "../src/db/client";
import { apiKeys, oauthGrants } from "../src/db/schema";
import { ACCESS_TOKEN_TTL_MS, issueTokens, resolveAccessToken } from "../src/oauth/tokens";
import { s256Challenge } from "../src/oauth/pkce";
import worker from "../src/index";
import { fingerprint } from "../src/lib/crypto";

const REDIRECT = "http://127.0.0.1:33418/callback";
const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

async function register(body: Record<string, unknown>, key?: string): Promise<Response> {
  return call("/oauth/register", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" }, ...(key ? { key } : {}) });
}

async function publicClient(): Promise<string> {
  const res = await register({ client_name: "Test <MCP> client", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { client_id: string; client_secret?: string };
  expect(body.client_secret).toBeUndefined();
  return body.client_id;
}

function pkce() {
  const verifier = `v-${crypto.randomUUID()}-${crypto.randomUUID()}`;
  return { verifier, challenge: s256Challenge(verifier) };
}

const authorizeParams = (clientId: string, challenge: string, extra: Record<string, string> = {}) => ({
  response_type: "code",
  client_id: clientId,
  redirect_uri: REDIRECT,
  code_challenge: challenge,
  code_challenge_method: "S256",
  state: "st<ate>&1",
  scope: "mcp",
  ...extra,
});

const csrfOf = (page: string) => /name="csrf_token" value="([^"]+)"/.exec(page)?.[1];
const keyOptions = (page: string) => [...page.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);

/** Signs in through the authorization page's form and returns the session cookie. */
async function signIn(org: SeededOrg, params: Record<string, string>): Promise<string> {
  const res = await call("/oauth/authorize", { method: "POST", redirect: "manual", ...form({ ...params, action: "sign_in", email: org.ownerEmail, password: org.ownerPassword }) });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie") ?? "";
  expect(cookie).toMatch(/^swb_session=[A-Za-z0-9]+;.*HttpOnly/);
  expect(res.headers.get("location")).toBe(`/oauth/authorize?${new URLSearchParams(params).toString()}`);
  return cookie.split(";")[0]!;
}

/** Full browser leg: sign in, consent with `keyId`, return the code from the redirect. */
async function authorize(org: SeededOrg, clientId: string, challenge: string, keyId: string): Promise<string> {
  const params = authorizeParams(clientId, challenge);
  const cookie = await signIn(org, params);
  const page = await call(`/oauth/authorize?${new URLSearchParams(params)}`, { headers: { cookie } });
  expect(page.status).toBe(200);
  const html = await page.text();
  const csrf = csrfOf(html);
  expect(csrf).toBeTruthy();
  expect(keyOptions(html)).toContain(keyId);
  const res = await call("/oauth/authorize", { method: "POST", redirect: "manual", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ ...params, action: "approve", csrf_token: csrf!, key_id: keyId }).toString() });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  expect(location.searchParams.get("state")).toBe("st<ate>&1");
  expect(location.searchParams.get("iss")).toBe("http://gw.test");
  return location.searchParams.get("code")!;
}

const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  call("/oauth/token", { method: "POST", body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

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

describe("authorization code + PKCE", () => {
  it("signs in, consents, exchanges the code, refreshes with rotation and revokes", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();

    const signInPage = await call(`/oauth/authorize?${new URLSearchParams(authorizeParams(clientId, await challenge))}`);
    expect(signInPage.status).toBe(200);
    const html = await signInPage.text();
    expect(html).toContain('name="password"');
    expect(html).toContain("Test &lt;MCP&gt; client");
    expect(html).not.toContain("<MCP>");
    expect(html).toContain('value="st&lt;ate&gt;&amp;1"');

    const code = await authorize(org, clientId, await challenge, org.keyId);
    expect(code).toMatch(/^swbo_ac_/);

    const res = await token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const tokens = (await res.json()) as TokenResponse;
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "mcp" });
    expect(tokens.access_token).toMatch(/^swbo_at_[A-Za-z0-9]{40}$/);
    expect(tokens.refresh_token).toMatch(/^swbo_rt_[A-Za-z0-9]{40}$/);
    expect(tokens.access_token).not.toBe(org.key);

    const info = await resolveAccessToken(env, tokens.access_token);
    expect(info).toMatchObject({ apiKeyId: org.keyId, clientId, scope: "mcp" });
    expect(info!.expiresAt).toBeGreaterThan(Date.now() + ACCESS_TOKEN_TTL_MS - 60_000);

    // Only keyed fingerprints are stored.
    const stored = await getDb(env.DB).select().from(oauthGrants).where(eq(oauthGrants.tokenHash, await fingerprint(TEST_SECRETS.KEY_HASH_SECRET, tokens.access_token))).get();
    expect(stored?.kind).toBe("access");
    const raw = await env.DB.prepare("SELECT count(*) AS n FROM oauth_grants WHERE token_hash = ?").bind(tokens.access_token).first<{ n: number }>();
    expect(raw?.n).toBe(0);

    // The code is single use; replaying it revokes what it issued.
    const replay = await token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: clientId });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    expect(await resolveAccessToken(env, tokens.access_token)).toBeNull();
    const dead = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token!, client_id: clientId });
    expect(dead.status).toBe(400);
  });

  it("rotates refresh tokens; revocation and expiry make access tokens unusable", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorize(org, clientId, await challenge, org.keyId);
    const first = (await (await token({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId })).json()) as TokenResponse;

    const refreshed = await token({ grant_type: "refresh_token", refresh_token: first.refresh_token!, client_id: clientId });
    expect(refreshed.status).toBe(200);
    const second = (await refreshed.json()) as TokenResponse;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await resolveAccessToken(env, second.access_token)).toMatchObject({ apiKeyId: org.keyId });

    // Expired: an hour and a bit later the token resolves to null.
    expect(await resolveAccessToken(env, second.access_token, Date.now() + ACCESS_TOKEN_TTL_MS + 1000)).toBeNull();

    // Revoking the current refresh token revokes the grant's access tokens too (RFC 7009 2.1).
    const revoke = await call("/oauth/revoke", { method: "POST", ...form({ token: second.refresh_token!, client_id: clientId, token_type_hint: "refresh_token" }) });
    expect(revoke.status).toBe(200);
    expect(await resolveAccessToken(env, second.access_token)).toBeNull();
    const after = await token({ grant_type: "refresh_token", refresh_token: second.refresh_token!, client_id: clientId });
    expect(after.status).toBe(400);
    expect(await after.json()).toMatchObject({ error: "invalid_grant" });

    // Unknown tokens: still 200.
    const unknown = await call("/oauth/revoke", { method: "POST", ...form({ token: "swbo_at_" + "A".repeat(40), client_id: clientId }) });
    expect(unknown.status).toBe(200);
  });

  it("revokes an access token directly", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorize(org, clientId, await challenge, org.keyId);
    const t = (await (await token({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId })).json()) as TokenResponse;
    expect(await resolveAccessToken(env, t.access_token)).not.toBeNull();
    await call("/oauth/revoke", { method: "POST", ...form({ token: t.access_token, client_id: clientId }) });
    expect(await resolveAccessToken(env, t.access_token)).toBeNull();
    // The refresh token of the grant still works (only the access token was revoked).
    expect((await token({ grant_type: "refresh_token", refresh_token: t.refresh_token!, client_id: clientId })).status).toBe(200);
  });

  it("rejects a wrong code_verifier", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const code = await authorize(org, clientId, await challenge, org.keyId);
    const res = await token({ grant_type: "authorization_code", code, code_verifier: "x".repeat(50), redirect_uri: REDIRECT, client_id: clientId });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_grant", error_description: expect.stringContaining("PKCE") });
  });

  it("rejects redirect URI mismatches at both endpoints", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const page = await call(`/oauth/authorize?${new URLSearchParams(authorizeParams(clientId, await challenge, { redirect_uri: "http://127.0.0.1:33418/other" }))}`, { redirect: "manual" });
    expect(page.status).toBe(400);
    expect(page.headers.get("location")).toBeNull();
    expect(await page.text()).toContain("redirect_uri does not match");

    const code = await authorize(org, clientId, await challenge, org.keyId);
    const res = await token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: "http://127.0.0.1:33418/other", client_id: clientId });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("requires PKCE S256 and redirects other request errors to the client", async () => {
    const clientId = await publicClient();
    const params = authorizeParams(clientId, "");
    const { code_challenge: _c, ...noChallenge } = params;
    const res = await call(`/oauth/authorize?${new URLSearchParams(noChallenge)}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.searchParams.get("error")).toBe("invalid_request");
    expect(loc.searchParams.get("state")).toBe("st<ate>&1");
    const plain = await call(`/oauth/authorize?${new URLSearchParams({ ...params, code_challenge: "a".repeat(43), code_challenge_method: "plain" })}`, { redirect: "manual" });
    expect(new URL(plain.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const unknownClient = await call(`/oauth/authorize?${new URLSearchParams({ ...params, client_id: "oac_AAAAAAAAAAAAAAAAAAAA" })}`, { redirect: "manual" });
    expect(unknownClient.status).toBe(400);
  });

  it("denies, checks CSRF and only offers the session's keys", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const params = authorizeParams(clientId, await challenge);
    const cookie = await signIn(org, params);

    const forged = await call("/oauth/authorize", { method: "POST", redirect: "manual", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ ...params, action: "approve", csrf_token: "forged", key_id: org.keyId }).toString() });
    expect(forged.status).toBe(403);

    const html = await (await call(`/oauth/authorize?${new URLSearchParams(params)}`, { headers: { cookie } })).text();
    const other = await seedOrg();
    expect(keyOptions(html)).not.toContain(other.keyId);
    const foreign = await call("/oauth/authorize", { method: "POST", redirect: "manual", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ ...params, action: "approve", csrf_token: csrfOf(html)!, key_id: other.keyId }).toString() });
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get("location")).toBeNull();

    const deny = await call("/oauth/authorize", { method: "POST", redirect: "manual", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ ...params, action: "deny", csrf_token: csrfOf(html)! }).toString() });
    expect(deny.status).toBe(302);
    const loc = new URL(deny.headers.get("location")!);
    expect(loc.searchParams.get("error")).toBe("access_denied");
    expect(loc.searchParams.get("code")).toBeNull();
  });

  it("offers developers only the keys they created", async () => {
    const dev = { email: `dev-${crypto.randomUUID().slice(0, 8)}@example.test`, password: "developer password 123" };
    const created = await call("/v1/master/members", { method: "POST", key: org.masterKey, body: JSON.stringify({ ...dev, name: "Dev", role: "developer" }) });
    expect(created.status).toBe(201);
    const member = ((await created.json()) as { member: { id: string } }).member;
    const devKey = await addKey(org, { createdBy: member.id, description: "dev key" });
    const clientId = await publicClient();
    const { challenge } = pkce();
    const params = authorizeParams(clientId, await challenge);
    const res = await call("/oauth/authorize", { method: "POST", redirect: "manual", ...form({ ...params, action: "sign_in", email: dev.email, password: dev.password }) });
    expect(res.status).toBe(303);
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const html = await (await call(`/oauth/authorize?${new URLSearchParams(params)}`, { headers: { cookie } })).text();
    expect(keyOptions(html)).toEqual([devKey.row.id]);
    // The owner sees every active key of the organization, the developer's included.
    const ownerCookie = await signIn(org, params);
    const ownerHtml = await (await call(`/oauth/authorize?${new URLSearchParams(params)}`, { headers: { cookie: ownerCookie } })).text();
    expect(keyOptions(ownerHtml)).toEqual(expect.arrayContaining([org.keyId, devKey.row.id]));
  });

  it("rejects a wrong password on the sign-in form", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const res = await call("/oauth/authorize", { method: "POST", redirect: "manual", ...form({ ...authorizeParams(clientId, await challenge), action: "sign_in", email: org.ownerEmail, password: "wrong password!!" }) });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await res.text()).toContain("Invalid e-mail or password");
  });

  it("stops refreshing once the key is disabled", async () => {
    const extra = await addKey(org, { description: "to disable" });
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorize(org, clientId, await challenge, extra.row.id);
    const t = (await (await token({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId })).json()) as TokenResponse;
    await getDb(env.DB).update(apiKeys).set({ status: "inactive" }).where(eq(apiKeys.id, extra.row.id));
    const res = await token({ grant_type: "refresh_token", refresh_token: t.refresh_token!, client_id: clientId });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_grant" });
  });
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

describe("grant cleanup", () => {
  it("the daily cron deletes grants expired or revoked more than a day ago, keeping live ones", async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await authorize(org, clientId, await challenge, org.keyId);
    const t = (await (await token({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId })).json()) as TokenResponse;
    const count = async () => (await getDb(env.DB).select().from(oauthGrants).where(eq(oauthGrants.clientId, clientId))).length;
    expect(await count()).toBe(3); // used code + access + refresh

    const ctrl = (cron: string, at: number) => createScheduledController({ scheduledTime: at, cron });
    // Every-minute cron: no cleanup.
    const minute = createExecutionContext();
    worker.scheduled(ctrl("* * * * *", Date.now() + 2 * 86_400_000), env, minute);
    await waitOnExecutionContext(minute);
    expect(await count()).toBe(3);
    // Two days later the used code and the expired access token go; the refresh token (30 days) stays.
    const ectx = createExecutionContext();
    worker.scheduled(ctrl("17 3 * * *", Date.now() + 2 * 86_400_000), env, ectx);
    await waitOnExecutionContext(ectx);
    expect(await count()).toBe(1);
    expect(await resolveAccessToken(env, t.access_token)).toBeNull();
    expect((await token({ grant_type: "refresh_token", refresh_token: t.refresh_token!, client_id: clientId })).status).toBe(200);
  });
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
    const { bootstrapOrganization } = await import("../src/organizations/bootstrap");
    const second = await bootstrapOrganization(env, { name: "Second Org", plan: "pro", owner: { email: org.ownerEmail, name: "Owner", password: org.ownerPassword } });
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
