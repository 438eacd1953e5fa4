/**
 * OpenID Connect sign-in against a real provider (`oidc-provider`, started by the global setup):
 * authorization code flow with PKCE, `state` and `nonce`, the ID token's signature and claims,
 * allowed domains, just-in-time membership, and SSO required with a break-glass owner.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { members, sessions, users } from "../../src/db/schema";
import { callback, configureSso, freshDomain, issuer, loginAtProvider, sessionCookieOf, signInWithSso, start, tamperNextIdToken } from "./helpers";

let org: SeededOrg;
let domain: string;

beforeAll(async () => {
  org = await seedOrg();
  domain = freshDomain();
  const res = await configureSso(org, { allowedDomains: [domain, "other-allowed.test"] });
  expect(res.status, await res.clone().text()).toBe(200);
});

async function expectRefused(res: Response, status: number, text: RegExp) {
  expect(res.status).toBe(status);
  expect(sessionCookieOf(res)).toBeNull();
  expect(await res.text()).toMatch(text);
}

describe("SSO sign-in through the provider's login page", () => {
  it("discovers the organization by e-mail domain, sends PKCE, state and nonce, and opens a session for a new member", async () => {
    const email = `alice@${domain}`;
    const { location, cookie } = await start({ email });
    const auth = new URL(location);
    expect(auth.origin).toBe(issuer());
    expect(auth.searchParams.get("code_challenge_method")).toBe("S256");
    expect(auth.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(auth.searchParams.get("state")).toBeTruthy();
    expect(auth.searchParams.get("nonce")).toBeTruthy();
    expect(auth.searchParams.get("redirect_uri")).toBe("http://gw.test/dashboard/sso/callback");
    // Nothing secret leaves in the browser's URL or cookie in the clear.
    expect(location + cookie).not.toContain("oidc-test-client-secret");

    const res = await callback(await loginAtProvider(location, email), cookie);
    expect(res.status, await res.clone().text()).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/keys");
    const session = sessionCookieOf(res);
    expect(session).toBeTruthy();
    const me = await call("/api/me", { headers: { cookie: session! } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ user: { email }, organization: { id: org.orgId }, member: { role: "developer" } });
    // Just in time: an account without a password, a membership with the default role.
    const user = await getDb(env.DB).select().from(users).where(eq(users.email, email)).get();
    expect(user?.passwordHash).toBeNull();
    const rows = await getDb(env.DB).select().from(members).where(and(eq(members.organizationId, org.orgId), eq(members.userId, user!.id)));
    expect(rows).toHaveLength(1);
    expect((await getDb(env.DB).select().from(sessions).where(eq(sessions.userId, user!.id)).get())?.signInMethod).toBe("sso");

    // A second sign-in finds the same membership.
    expect((await signInWithSso(email)).status).toBe(303);
    expect(await getDb(env.DB).select().from(members).where(and(eq(members.organizationId, org.orgId), eq(members.userId, user!.id)))).toHaveLength(1);
  });

  it("refuses a callback whose state is not this browser's", async () => {
    const { location, cookie } = await start({ email: `bob@${domain}` });
    const back = new URL(await loginAtProvider(location, `bob@${domain}`));
    back.searchParams.set("state", "forged-state");
    await expectRefused(await callback(back.href, cookie), 403, /could not be verified/);
  });

  it("refuses a callback without the attempt cookie (another browser, or too late)", async () => {
    const { location } = await start({ email: `carol@${domain}` });
    await expectRefused(await callback(await loginAtProvider(location, `carol@${domain}`), null), 400, /did not start in this browser/);
  });

  it.each([
    ["wrong-nonce", /&quot;nonce&quot;|"nonce"/],
    ["bad-signature", /signature verification failed/],
    ["wrong-audience", /&quot;aud&quot;|"aud"/],
    ["expired", /expiration is past/],
  ] as const)("refuses an ID token with %s", async (mode, why) => {
    const email = `dave-${mode}@${domain}`;
    const { location, cookie } = await start({ email });
    const back = await loginAtProvider(location, email);
    await tamperNextIdToken(mode);
    const res = await callback(back, cookie);
    await expectRefused(res, 403, why);
    expect(await getDb(env.DB).select().from(users).where(eq(users.email, email)).get()).toBeUndefined();
  });

  it("refuses an e-mail the provider has not verified", async () => {
    const email = `erin@${domain}`;
    const { location, cookie } = await start({ email });
    const back = await loginAtProvider(location, email);
    await tamperNextIdToken("unverified-email");
    await expectRefused(await callback(back, cookie), 403, /not verified/);
  });

  it("refuses an e-mail whose domain the organization does not allow", async () => {
    // Started with an allowed address, signed in at the provider as someone elsewhere.
    const { location, cookie } = await start({ email: `frank@${domain}` });
    await expectRefused(await callback(await loginAtProvider(location, "frank@not-allowed.test"), cookie), 403, /not-allowed\.test may not sign in/);
    // And the sign-in page finds no organization for that domain at all.
    const none = await call(`/dashboard/sso/start?email=${encodeURIComponent("frank@not-allowed.test")}`, { redirect: "manual" });
    expect(none.status).toBe(404);
    expect(await none.text()).toContain("No organization lets");
  });
});

describe("SSO required", () => {
  it("refuses password sign-in to everyone but the break-glass owner, and ends their password sessions", async () => {
    const o = await seedOrg();
    const d = freshDomain();
    const memberEmail = `grace@${d}`;
    const added = await call("/v1/master/members", { method: "POST", key: o.masterKey, ...json({ email: memberEmail, name: "Grace", role: "admin", password: "a long enough password" }) });
    expect(added.status).toBe(201);
    const signIn = (email: string, password: string) => call("/api/auth/sign-in", { method: "POST", ...json({ email, password }) });
    const before = await signIn(memberEmail, "a long enough password");
    expect(before.status).toBe(200);
    const oldSession = (before.headers.get("set-cookie") ?? "").split(";")[0]!;

    const res = await configureSso(o, { allowedDomains: [d], required: true });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { sso: { breakGlassMemberId: string } }).sso.breakGlassMemberId).toBe(o.ownerMemberId);

    const refused = await signIn(memberEmail, "a long enough password");
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: "sso_required", message: expect.stringContaining("Sign in with SSO") } });
    expect((await call("/api/me", { headers: { cookie: oldSession } })).status).toBe(401);
    // A wrong password is still just a wrong password.
    expect((await signIn(memberEmail, "not the password at all")).status).toBe(401);
    // The break-glass owner keeps password sign-in.
    expect((await signIn(o.ownerEmail, o.ownerPassword)).status).toBe(200);
    // The member gets in through the provider.
    const sso = await signInWithSso(memberEmail);
    expect(sso.status).toBe(303);
    const me = await call("/api/me", { headers: { cookie: sessionCookieOf(sso)! } });
    expect(await me.json()).toMatchObject({ user: { email: memberEmail }, member: { role: "admin" } });
  });
});
