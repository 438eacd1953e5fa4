/**
 * SSO configuration over the master API and the dashboard's session API (owners only): the
 * client secret is stored sealed and never shown again, bad input is a clear 400, every change is
 * one audit entry, and an SSO session opens only its own organization.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { signIn } from "../dashboard/session";
import { getDb } from "../../src/db/client";
import { organizationSso } from "../../src/db/schema";
import { OIDC_CLIENT_SECRET } from "../oidc-provider/client.mjs";
import { configureSso, freshDomain, sessionCookieOf, signInWithSso } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

const errorOf = async (res: Response) => ((await res.json()) as { error: { message: string; param: string | null } }).error;

describe("SSO configuration", () => {
  it("PUT saves, GET shows it without the secret, the secret is sealed at rest, DELETE removes it", async () => {
    const d = freshDomain();
    const put = await configureSso(org, { allowedDomains: [d.toUpperCase()] });
    expect(put.status, await put.clone().text()).toBe(200);
    const text = await put.text();
    expect(text).not.toContain(OIDC_CLIENT_SECRET);
    const got = await call("/v1/master/sso", { key: org.masterKey });
    const body = await got.text();
    expect(body).not.toContain(OIDC_CLIENT_SECRET);
    expect(JSON.parse(body)).toMatchObject({ sso: { allowedDomains: [d], defaultRole: "developer", required: false, clientSecretHint: `…${OIDC_CLIENT_SECRET.slice(-4)}`, redirectUri: "http://gw.test/dashboard/sso/callback" } });
    const row = await getDb(env.DB).select().from(organizationSso).where(eq(organizationSso.organizationId, org.orgId)).get();
    expect(row?.clientSecretEncrypted).toMatch(/^v1\./);
    expect(row?.clientSecretEncrypted).not.toContain(OIDC_CLIENT_SECRET);

    // Saving again without the secret keeps it: sign-in still works.
    expect((await call("/v1/master/sso", { method: "PUT", key: org.masterKey, ...json({ issuer: row!.issuer, clientId: row!.clientId, allowedDomains: [d], defaultRole: "admin" }) })).status).toBe(200);
    const sso = await signInWithSso(`kept@${d}`);
    expect(sso.status).toBe(303);
    expect(await (await call("/api/me", { headers: { cookie: sessionCookieOf(sso)! } })).json()).toMatchObject({ member: { role: "admin" } });

    // Audited once per change, without the secret.
    const log = await call("/v1/master/audit-log", { key: org.masterKey });
    const entries = ((await log.json()) as { entries: { action: string; target: { type: string; id: string | null }; after?: unknown }[] }).entries;
    const updates = entries.filter((e) => e.action === "sso.update");
    expect(updates.length).toBeGreaterThanOrEqual(2);
    // The organization's SSO setting has no id of its own: the target names the organization.
    for (const e of updates) expect(e.target).toEqual({ type: "sso", id: org.orgId });
    expect(JSON.stringify(entries)).not.toContain(OIDC_CLIENT_SECRET);

    expect((await call("/v1/master/sso", { method: "DELETE", key: org.masterKey })).status).toBe(200);
    expect(await (await call("/v1/master/sso", { key: org.masterKey })).json()).toEqual({ sso: null });
    expect((await call("/v1/master/sso", { method: "DELETE", key: org.masterKey })).status).toBe(404);
  });

  it("bad input is a 400 naming the field", async () => {
    const o = await seedOrg();
    const noSecret = await call("/v1/master/sso", { method: "PUT", key: o.masterKey, ...json({ issuer: "http://127.0.0.1:1", clientId: "x", allowedDomains: ["a.test"], defaultRole: "developer" }) });
    expect(noSecret.status).toBe(400);
    expect((await errorOf(noSecret)).param).toBe("clientSecret");
    const badDomain = await configureSso(o, { allowedDomains: ["not a domain"] });
    expect(badDomain.status).toBe(400);
    const badRole = await configureSso(o, { allowedDomains: ["a.test"], defaultRole: "owner" });
    expect(badRole.status).toBe(400);
    const unreachable = await configureSso(o, { allowedDomains: ["a.test"], issuer: "http://127.0.0.1:1/nothing-here" });
    expect(unreachable.status).toBe(400);
    expect(await errorOf(unreachable)).toMatchObject({ param: "issuer", message: expect.stringContaining("OpenID configuration") });
    const notOwner = await configureSso(o, { allowedDomains: ["a.test"], required: true, breakGlassMemberId: "mem_nobody" });
    expect(notOwner.status).toBe(400);
    expect((await errorOf(notOwner)).param).toBe("breakGlassMemberId");
  });

  it("the dashboard's /api/sso is for owners only", async () => {
    const o = await seedOrg();
    const owner = await signIn(o.ownerEmail, o.ownerPassword);
    const ownerGet = await call("/api/sso", { headers: { cookie: owner.cookie } });
    expect(ownerGet.status).toBe(200);
    const d = freshDomain();
    const admin = `admin@${d}`;
    expect((await call("/v1/master/members", { method: "POST", key: o.masterKey, ...json({ email: admin, name: "A", role: "admin", password: "a long enough password" }) })).status).toBe(201);
    const s = await signIn(admin, "a long enough password");
    const res = await call("/api/sso", { headers: { cookie: s.cookie } });
    expect(res.status).toBe(403);
  });
});

describe("an SSO session opens only its own organization", () => {
  it("an SSO session may switch to no other organization (OAuth consent picker); a password session may", async () => {
    const [a, b] = [await seedOrg(), await seedOrg()];
    const d = freshDomain();
    expect((await configureSso(a, { allowedDomains: [d] })).status).toBe(200);
    const email = `both@${d}`;
    // The person is also a member of B (added by B, with a password B chose).
    expect((await call("/v1/master/members", { method: "POST", key: b.masterKey, ...json({ email, name: "Both", role: "owner", password: "b chose this password" }) })).status).toBe(201);
    const sso = await signInWithSso(email);
    const cookie = sessionCookieOf(sso)!;
    const me = (await (await call("/api/me", { headers: { cookie } })).json()) as { organization: { id: string }; csrfToken: string };
    expect(me.organization.id).toBe(a.orgId);
    const { switchableBy } = await import("../../src/auth/sso-policy");
    const memberships = [
      { organizationId: a.orgId, memberId: "m-a" },
      { organizationId: b.orgId, memberId: "m-b" },
    ];
    expect(await switchableBy(env, { signInMethod: "sso", organizationId: a.orgId }, memberships)).toEqual([memberships[0]]);
    expect(await switchableBy(env, { signInMethod: "password", organizationId: a.orgId }, memberships)).toEqual(memberships);
  });
});
