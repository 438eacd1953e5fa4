/**
 * Replay detection of OAuth codes and rotated refresh tokens (RFC 6749 10.5) revokes the grant's
 * family only when the client presenting the used token is the client it was issued to. Another
 * client that saw a used code (a log, a referrer) must not be able to end the legitimate client's
 * tokens by presenting it.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { clearAccessTokenCache, createAuthorizationCode, resolveAccessToken } from "../../src/oauth/tokens";
import { s256Challenge } from "../../src/oauth/pkce";

const REDIRECT = "http://127.0.0.1:33418/callback";

interface Tokens {
  access_token: string;
  refresh_token: string;
}

async function publicClient(): Promise<string> {
  const res = await call("/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "replay test", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

const token = (fields: Record<string, string>) =>
  call("/oauth/token", { method: "POST", body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

/** Whether the access token is live in D1 (past this isolate's 5 s cache). */
async function live(accessToken: string): Promise<boolean> {
  clearAccessTokenCache();
  return (await resolveAccessToken(env, accessToken)) !== null;
}

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

/** Client `owner` gets a code for the org's key and exchanges it. */
async function exchanged(owner: string): Promise<{ code: string; verifier: string; tokens: Tokens }> {
  const verifier = `v-${crypto.randomUUID()}-${crypto.randomUUID()}`;
  const code = await createAuthorizationCode(env, { clientId: owner, apiKeyId: org.keyId, scope: "mcp", redirectUri: REDIRECT, codeChallenge: await s256Challenge(verifier) });
  const res = await token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: owner });
  expect(res.status).toBe(200);
  return { code, verifier, tokens: (await res.json()) as Tokens };
}

describe("a used code or refresh token presented again", () => {
  it("by another client: refused, and the legitimate client's tokens keep working", async () => {
    const owner = await publicClient();
    const foreign = await publicClient();
    const { code, verifier, tokens } = await exchanged(owner);
    const replay = await token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: foreign });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant", error_description: "The authorization code is invalid or expired." });
    expect(await live(tokens.access_token)).toBe(true);
    const refreshed = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: owner });
    expect(refreshed.status).toBe(200);
  });

  it("by the client it was issued to: refused, and the grant's tokens are revoked", async () => {
    const owner = await publicClient();
    const { code, verifier, tokens } = await exchanged(owner);
    const replay = await token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: owner });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error_description: string }).error_description).toMatch(/already used; its tokens are revoked/);
    expect(await live(tokens.access_token)).toBe(false);
    expect((await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: owner })).status).toBe(400);
  });

  it("a rotated refresh token: another client cannot revoke the family; its own client's reuse does", async () => {
    const owner = await publicClient();
    const foreign = await publicClient();
    const { tokens } = await exchanged(owner);
    const rotated = (await (await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: owner })).json()) as Tokens;
    const byForeign = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: foreign });
    expect(byForeign.status).toBe(400);
    expect(await live(rotated.access_token)).toBe(true);
    const byOwner = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: owner });
    expect(byOwner.status).toBe(400);
    expect(await live(rotated.access_token)).toBe(false);
  });
});
