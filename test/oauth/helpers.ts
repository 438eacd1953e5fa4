/**
 * What the OAuth suites share (test/oauth/*.test.ts): client registration, PKCE, the authorization
 * page's sign-in and consent legs, and the token endpoint.
 */
import { expect } from "vitest";
import { call, type SeededOrg } from "../helpers/fixtures";
import { s256Challenge } from "../../src/oauth/pkce";

export const REDIRECT = "http://127.0.0.1:33418/callback";
export const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

export async function register(body: Record<string, unknown>, key?: string): Promise<Response> {
  return call("/oauth/register", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" }, ...(key ? { key } : {}) });
}

export async function publicClient(): Promise<string> {
  const res = await register({ client_name: "Test <MCP> client", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { client_id: string; client_secret?: string };
  expect(body.client_secret).toBeUndefined();
  return body.client_id;
}

export function pkce() {
  const verifier = `v-${crypto.randomUUID()}-${crypto.randomUUID()}`;
  return { verifier, challenge: s256Challenge(verifier) };
}

export const authorizeParams = (clientId: string, challenge: string, extra: Record<string, string> = {}) => ({
  response_type: "code",
  client_id: clientId,
  redirect_uri: REDIRECT,
  code_challenge: challenge,
  code_challenge_method: "S256",
  state: "st<ate>&1",
  scope: "mcp",
  ...extra,
});

export const csrfOf = (page: string) => /name="csrf_token" value="([^"]+)"/.exec(page)?.[1];
export const keyOptions = (page: string) => [...page.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);

/** Signs in through the authorization page's form and returns the session cookie. */
export async function signIn(org: SeededOrg, params: Record<string, string>): Promise<string> {
  const res = await call("/oauth/authorize", { method: "POST", redirect: "manual", ...form({ ...params, action: "sign_in", email: org.ownerEmail, password: org.ownerPassword }) });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie") ?? "";
  expect(cookie).toMatch(/^swb_session=[A-Za-z0-9]+;.*HttpOnly/);
  expect(res.headers.get("location")).toBe(`/oauth/authorize?${new URLSearchParams(params).toString()}`);
  return cookie.split(";")[0]!;
}

/** Full browser leg: sign in, consent with `keyId`, return the code from the redirect. */
export async function authorize(org: SeededOrg, clientId: string, challenge: string, keyId: string): Promise<string> {
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

export const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  call("/oauth/token", { method: "POST", body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
