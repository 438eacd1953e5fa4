/** Driving an SSO sign-in against the real OpenID provider the global setup started. */
import { expect, inject } from "vitest";
import { call, json, type SeededOrg } from "../helpers/fixtures";
import { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } from "../oidc-provider/client.mjs";

export const issuer = (): string => inject("oidcIssuer");

/** A fresh e-mail domain, so organizations of different tests never claim the same one. */
export const freshDomain = (): string => `acme-${crypto.randomUUID().slice(0, 8)}.test`;

export function configureSso(org: SeededOrg, body: Record<string, unknown>): Promise<Response> {
  return call("/v1/master/sso", {
    method: "PUT",
    key: org.masterKey,
    ...json({ issuer: issuer(), clientId: OIDC_CLIENT_ID, clientSecret: OIDC_CLIENT_SECRET, defaultRole: "developer", ...body }),
  });
}

/** `GET /dashboard/sso/start`: the provider's authorization URL (`Refresh`, and the page's link) and the attempt cookie. */
export async function start(query: Record<string, string>): Promise<{ location: string; cookie: string }> {
  const res = await call(`/dashboard/sso/start?${new URLSearchParams(query)}`, { redirect: "manual" });
  const html = await res.text();
  expect(res.status, html).toBe(200);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  expect(cookie).toMatch(/^swb_sso=./);
  const location = /^0; url=(.+)$/.exec(res.headers.get("refresh") ?? "")?.[1] ?? "";
  expect(html).toContain(`href="${location.replace(/&/g, "&amp;")}"`);
  return { location, cookie };
}

/** The person signs in at the provider's own pages as `login`; the redirect back to the gateway. */
export async function loginAtProvider(location: string, login: string): Promise<string> {
  const res = await fetch(`${issuer()}/__login`, { method: "POST", body: JSON.stringify({ url: location, login }) });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { location: string }).location;
}

/** The next ID token the provider issues is altered (see test/oidc-provider/server.mjs). */
export async function tamperNextIdToken(mode: "bad-signature" | "wrong-audience" | "expired" | "wrong-nonce" | "unverified-email"): Promise<void> {
  expect((await fetch(`${issuer()}/__tamper`, { method: "POST", body: JSON.stringify({ mode }) })).status).toBe(204);
}

export function callback(url: string, cookie: string | null): Promise<Response> {
  const u = new URL(url);
  return call(`${u.pathname}${u.search}`, { redirect: "manual", ...(cookie ? { headers: { cookie } } : {}) });
}

/** The whole sign-in; the callback's answer. */
export async function signInWithSso(email: string, login = email): Promise<Response> {
  const { location, cookie } = await start({ email });
  return callback(await loginAtProvider(location, login), cookie);
}

/** The `swb_session` cookie an answer sets, or null. */
export function sessionCookieOf(res: Response): string | null {
  const found = res.headers.getSetCookie().find((c) => c.startsWith("swb_session=") && !c.startsWith("swb_session=;"));
  return found ? found.split(";")[0]! : null;
}
