/**
 * Rolling, disabling or deleting a gateway key ends its OAuth access. Before the
 * fix a client_credentials client registered with the key kept minting tokens after a roll, and
 * tokens minted before the roll kept working on /mcp.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { signIn } from "../dashboard/session";
import { issueTokens } from "../../src/oauth/tokens";

const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
  method: "POST",
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
});

interface Access {
  /** Basic credentials of the client_credentials client registered with the key. */
  basic: string;
  /** An access token that client minted. */
  ccToken: string;
  /** Tokens of an authorization_code grant for the key (another client, not bound to the key). */
  codeAccess: string;
  codeRefresh: string;
  codeClientId: string;
}

async function oauthFor(key: string, keyId: string): Promise<Access> {
  const reg = await call("/oauth/register", { method: "POST", key, ...json({ grant_types: ["client_credentials"], client_name: "svc" }) });
  expect(reg.status).toBe(201);
  const client = (await reg.json()) as { client_id: string; client_secret: string };
  const basic = `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`;
  const minted = await call("/oauth/token", form({ grant_type: "client_credentials" }, { authorization: basic }));
  expect(minted.status).toBe(200);
  const ccToken = ((await minted.json()) as { access_token: string }).access_token;

  const pub = await call("/oauth/register", {
    method: "POST",
    ...json({ client_name: "desktop", redirect_uris: ["http://127.0.0.1:5000/cb"], token_endpoint_auth_method: "none" }),
  });
  expect(pub.status).toBe(201);
  const codeClientId = ((await pub.json()) as { client_id: string }).client_id;
  // What the authorization_code exchange issues once a member approved this key.
  const code = await issueTokens(env, { clientId: codeClientId, apiKeyId: keyId, scope: "mcp", refresh: true });
  return { basic, ccToken, codeAccess: code.access_token, codeRefresh: code.refresh_token!, codeClientId };
}

const mcp = (token: string) => call("/mcp", { method: "POST", key: token, headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });

async function expectWorking(a: Access): Promise<void> {
  expect((await mcp(a.ccToken)).status).toBe(200);
  expect((await mcp(a.codeAccess)).status).toBe(200);
}

async function expectEnded(a: Access): Promise<void> {
  expect((await mcp(a.ccToken)).status).toBe(401);
  expect((await mcp(a.codeAccess)).status).toBe(401);
  const again = await call("/oauth/token", form({ grant_type: "client_credentials" }, { authorization: a.basic }));
  expect(again.status).toBe(401);
  expect(await again.json()).toMatchObject({ error: "invalid_client" });
  const refreshed = await call("/oauth/token", form({ grant_type: "refresh_token", refresh_token: a.codeRefresh, client_id: a.codeClientId }));
  expect(refreshed.status).toBe(400);
  expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
}

async function ownerSession(org: SeededOrg) {
  return signIn(org.ownerEmail, org.ownerPassword);
}

describe("ending a key ends its OAuth clients and tokens", () => {
  it("roll: the client registered with the old secret mints nothing, and earlier tokens stop working on /mcp", async () => {
    const org = await seedOrg();
    const access = await oauthFor(org.key, org.keyId);
    await expectWorking(access);
    const s = await ownerSession(org);
    const rolled = await call(`/api/keys/${org.keyId}/roll`, { method: "POST", headers: { cookie: s.cookie, "x-csrf-token": s.csrf } });
    expect(rolled.status).toBe(200);
    const newSecret = ((await rolled.json()) as { apiKey: { token: string } }).apiKey.token;
    await expectEnded(access);
    // The new secret registers a new client that works.
    const fresh = await oauthFor(newSecret, org.keyId);
    await expectWorking(fresh);
  });

  it("disable: tokens and clients end, and enabling the key again does not bring them back", async () => {
    const org = await seedOrg();
    const access = await oauthFor(org.key, org.keyId);
    await expectWorking(access);
    const off = await call(`/v1/master/keys/${org.keyId}`, { method: "PATCH", key: org.masterKey, ...json({ status: "inactive" }) });
    expect(off.status).toBe(200);
    const on = await call(`/v1/master/keys/${org.keyId}`, { method: "PATCH", key: org.masterKey, ...json({ status: "active" }) });
    expect(on.status).toBe(200);
    // The key itself works again; its old OAuth access does not.
    expect((await call("/v1/models", { key: org.key })).status).toBe(200);
    await expectEnded(access);
  });

  it("delete: tokens and clients end", async () => {
    const org = await seedOrg();
    const access = await oauthFor(org.key, org.keyId);
    await expectWorking(access);
    const del = await call(`/v1/master/keys/${org.keyId}`, { method: "DELETE", key: org.masterKey });
    expect(del.status).toBe(200);
    await expectEnded(access);
  });

  it("deleting a project ends the OAuth access of its keys", async () => {
    const org = await seedOrg();
    const made = await call("/v1/master/projects", { method: "POST", key: org.masterKey, ...json({ name: "doomed" }) });
    expect(made.status).toBe(201);
    const projectId = ((await made.json()) as { project: { id: string } }).project.id;
    const key = await call("/v1/master/keys", { method: "POST", key: org.masterKey, ...json({ description: "p", projectId }) });
    expect(key.status).toBe(201);
    const k = ((await key.json()) as { apiKey: { id: string; token: string } }).apiKey;
    const access = await oauthFor(k.token, k.id);
    await expectWorking(access);
    expect((await call(`/v1/master/projects/${projectId}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
    await expectEnded(access);
  });
});
