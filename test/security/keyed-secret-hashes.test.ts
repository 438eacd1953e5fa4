/**
 * OAuth codes, access and refresh tokens, OAuth client secrets, dashboard session tokens and
 * membership invitation tokens are
 * stored as keyed HMAC-SHA-256 fingerprints (KEY_HASH_SECRET), never as plain SHA-256. Rows
 * written before the change (plain SHA-256) keep working and are rewritten at their next use
 * (src/lib/secret-hash.ts).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { call, seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { signIn } from "../dashboard/session";
import { getDb } from "../../src/db/client";
import { membershipInvitations, oauthClients, oauthGrants, sessions } from "../../src/db/schema";
import { fingerprint, sha256Hex } from "../../src/lib/crypto";
import { clearAccessTokenCache, createAuthorizationCode, resolveAccessToken } from "../../src/oauth/tokens";
import { s256Challenge } from "../../src/oauth/pkce";
import { accept, captureMail, email, tokenFor } from "../helpers/mail";

const REDIRECT = "http://127.0.0.1:33418/callback";
const keyed = (secret: string) => fingerprint(TEST_SECRETS.KEY_HASH_SECRET, secret);
const db = () => getDb(env.DB);

const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  call("/oauth/token", { method: "POST", body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });

async function register(authMethod: "none" | "client_secret_basic"): Promise<{ id: string; secret?: string }> {
  const res = await call("/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "hash test", redirect_uris: [REDIRECT], token_endpoint_auth_method: authMethod }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { client_id: string; client_secret?: string };
  return { id: body.client_id, ...(body.client_secret ? { secret: body.client_secret } : {}) };
}

async function exchange(org: SeededOrg, clientId: string, basic?: string) {
  const verifier = `v-${crypto.randomUUID()}-${crypto.randomUUID()}`;
  const code = await createAuthorizationCode(env, { clientId, apiKeyId: org.keyId, scope: "mcp", redirectUri: REDIRECT, codeChallenge: await s256Challenge(verifier) });
  const res = await token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, ...(basic ? {} : { client_id: clientId }) }, basic ? { authorization: basic } : {});
  expect(res.status, await res.clone().text()).toBe(200);
  return { code, tokens: (await res.json()) as { access_token: string; refresh_token: string } };
}

const basicOf = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;
const hashOfGrant = async (id: string) => (await db().select({ h: oauthGrants.tokenHash }).from(oauthGrants).where(eq(oauthGrants.id, id)).get())!.h;
const grantByHash = (h: string) => db().select().from(oauthGrants).where(eq(oauthGrants.tokenHash, h)).get();

captureMail();

/** Adds a pending member by e-mail and returns the invitation token e-mailed to them. */
async function invite(org: SeededOrg): Promise<string> {
  const to = email("invited");
  const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, headers: { "content-type": "application/json" }, body: JSON.stringify({ email: to, name: "Invited", role: "developer" }) });
  expect(res.status).toBe(201);
  return tokenFor(to);
}
const invitationByHash = (h: string) => db().select().from(membershipInvitations).where(eq(membershipInvitations.tokenHash, h)).get();

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

describe("new secrets are stored as keyed fingerprints", () => {
  it("dashboard session tokens", async () => {
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const raw = s.cookie.split("=")[1]!;
    expect(await db().select().from(sessions).where(eq(sessions.tokenHash, await keyed(raw))).get()).toBeTruthy();
    expect(await db().select().from(sessions).where(eq(sessions.tokenHash, await sha256Hex(raw))).get()).toBeUndefined();
  });

  it("OAuth codes, access and refresh tokens, and client secrets", async () => {
    const client = await register("client_secret_basic");
    const row = await db().select().from(oauthClients).where(eq(oauthClients.id, client.id)).get();
    expect(row!.secretHash).toBe(await keyed(client.secret!));
    const { code, tokens } = await exchange(org, client.id, basicOf(client.id, client.secret!));
    for (const t of [code, tokens.access_token, tokens.refresh_token]) {
      expect(await grantByHash(await keyed(t)), t.slice(0, 8)).toBeTruthy();
      expect(await grantByHash(await sha256Hex(t)), t.slice(0, 8)).toBeUndefined();
    }
  });

  it("membership invitation tokens", async () => {
    const t = await invite(org);
    expect(await invitationByHash(await keyed(t))).toBeTruthy();
    expect(await invitationByHash(await sha256Hex(t))).toBeUndefined();
  });
});

describe("rows stored as plain SHA-256 before the change keep working and are rewritten", () => {
  it("a membership invitation token", async () => {
    const t = await invite(org);
    await db().update(membershipInvitations).set({ tokenHash: await sha256Hex(t) }).where(eq(membershipInvitations.tokenHash, await keyed(t)));
    const preview = await call("/api/memberships/preview", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: t }) });
    expect(preview.status, await preview.clone().text()).toBe(200);
    expect(await invitationByHash(await keyed(t))).toBeTruthy();
    expect(await invitationByHash(await sha256Hex(t))).toBeUndefined();
    expect((await accept(t, "a fresh password here")).status).toBe(200);
    expect((await accept(t, "a fresh password here")).status).toBe(400);
  });

  it("a dashboard session", async () => {
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const raw = s.cookie.split("=")[1]!;
    await db().update(sessions).set({ tokenHash: await sha256Hex(raw) }).where(eq(sessions.tokenHash, await keyed(raw)));
    const page = await call("/api/me", { headers: { cookie: s.cookie } });
    expect(page.status).toBe(200);
    expect(await db().select().from(sessions).where(eq(sessions.tokenHash, await keyed(raw))).get()).toBeTruthy();
  });

  it("access and refresh tokens", async () => {
    const client = await register("none");
    const { tokens } = await exchange(org, client.id);
    const access = await grantByHash(await keyed(tokens.access_token));
    const refresh = await grantByHash(await keyed(tokens.refresh_token));
    await db().update(oauthGrants).set({ tokenHash: await sha256Hex(tokens.access_token) }).where(eq(oauthGrants.id, access!.id));
    await db().update(oauthGrants).set({ tokenHash: await sha256Hex(tokens.refresh_token) }).where(eq(oauthGrants.id, refresh!.id));
    clearAccessTokenCache();
    expect(await resolveAccessToken(env, tokens.access_token)).toMatchObject({ apiKeyId: org.keyId, clientId: client.id });
    expect(await hashOfGrant(access!.id)).toBe(await keyed(tokens.access_token));
    const refreshed = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.id });
    expect(refreshed.status).toBe(200);
    expect(await hashOfGrant(refresh!.id)).toBe(await keyed(tokens.refresh_token));
  });

  it("an OAuth client secret", async () => {
    const client = await register("client_secret_basic");
    await db().update(oauthClients).set({ secretHash: await sha256Hex(client.secret!) }).where(eq(oauthClients.id, client.id));
    const { tokens } = await exchange(org, client.id, basicOf(client.id, client.secret!));
    expect(tokens.access_token).toMatch(/^swbo_at_/);
    expect((await db().select().from(oauthClients).where(eq(oauthClients.id, client.id)).get())!.secretHash).toBe(await keyed(client.secret!));
    // a wrong secret is still refused
    const wrong = await token({ grant_type: "refresh_token", refresh_token: tokens.refresh_token }, { authorization: basicOf(client.id, "swbo_cs_" + "x".repeat(40)) });
    expect(wrong.status).toBe(401);
  });
});
