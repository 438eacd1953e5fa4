/**
 * The authorization code flow with PKCE: sign-in and consent on the authorization page, the code
 * exchange, refresh with rotation, revocation and expiry, and the errors of each step.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { addKey, call, seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys, oauthGrants } from "../../src/db/schema";
import { ACCESS_TOKEN_TTL_MS, resolveAccessToken } from "../../src/oauth/tokens";
import { fingerprint } from "../../src/lib/crypto";
import { authorize, authorizeParams, csrfOf, form, keyOptions, pkce, publicClient, REDIRECT, signIn, token, type TokenResponse } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
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

