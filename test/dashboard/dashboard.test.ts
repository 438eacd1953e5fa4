import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg, rejection } from "../helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { readSession } from "../../src/auth/session";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { eq } from "drizzle-orm";

interface Session {
  cookie: string;
  csrf: string;
}
interface KeyJson {
  id: string;
  token?: string;
  status: string;
  description: string;
  expiresAt: string | null;
  expired: boolean;
  [k: string]: unknown;
}


async function signIn(email: string, password: string): Promise<Session> {
  const res = await call("/api/auth/sign-in", { method: "POST", ...json({ email, password }) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrfToken: string };
  const setCookie = res.headers.get("set-cookie") ?? "";
  return { cookie: setCookie.split(";")[0]!, csrf: body.csrfToken };
}

function api(s: Session, path: string, init: RequestInit & { csrf?: boolean } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("cookie", s.cookie);
  if (init.csrf !== false) headers.set("x-csrf-token", s.csrf);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { ...init, headers });
}

async function addMember(org: SeededOrg, role: "admin" | "developer"): Promise<{ id: string; email: string; password: string }> {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const password = "another long password";
  const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: role, role, password }) });
  expect(res.status).toBe(201);
  return { id: ((await res.json()) as { member: { id: string } }).member.id, email, password };
}

async function newKey(s: Session, org: SeededOrg, body: Record<string, unknown> = {}): Promise<KeyJson> {
  const res = await api(s, "/keys", { method: "POST", body: JSON.stringify({ projectId: org.projectId, description: "dash", ...body }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { apiKey: KeyJson }).apiKey;
}

describe("session bodies reject fields they do not apply", () => {
  it("sign-in and key bodies: 400 naming the unknown field", async () => {
    const org = await seedOrg();
    const signin = await call("/api/auth/sign-in", { method: "POST", ...json({ email: org.ownerEmail, password: org.ownerPassword, remember: true }) });
    expect(signin.status).toBe(400);
    expect(((await signin.json()) as { error: { param: string } }).error.param).toBe("remember");
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await api(s, "/keys", { method: "POST", body: JSON.stringify({ projectId: org.projectId, description: "d", usage_limit: "5" }) });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { param: string; message: string } }).error;
    expect(err.param).toBe("usage_limit");
    expect(err.message).toContain("Unknown field 'usage_limit'");
  });
});

describe("sign-in and sessions", () => {
  it("signs in with a secure HttpOnly cookie whose token is stored only hashed", async () => {
    const org = await seedOrg();
    const res = await call("/api/auth/sign-in", { method: "POST", ...json({ email: org.ownerEmail.toUpperCase(), password: org.ownerPassword }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user: { email: string }; csrfToken: string; member: { role: string } };
    expect(body.user.email).toBe(org.ownerEmail);
    expect(body.member.role).toBe("owner");
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^swb_session=[A-Za-z0-9]+;/);
    for (const flag of ["HttpOnly", "Secure", "SameSite=Lax", "Path=/"]) expect(cookie).toContain(flag);
    const token = cookie.split(";")[0]!.split("=")[1]!;
    const rows = await env.DB.prepare("SELECT token_hash FROM sessions").all<{ token_hash: string }>();
    expect(rows.results.some((r) => r.token_hash === token)).toBe(false);
    const session = await readSession(env, `other=1; swb_session=${token}`);
    expect(session).toMatchObject({ organizationId: org.orgId, memberId: org.ownerMemberId, role: "owner", csrfToken: body.csrfToken });
  });

  it("rejects wrong credentials with 401 and an unknown e-mail the same way", async () => {
    const org = await seedOrg();
    const wrong = await call("/api/auth/sign-in", { method: "POST", ...json({ email: org.ownerEmail, password: "wrong password!!" }) });
    expect(wrong.status).toBe(401);
    const unknown = await call("/api/auth/sign-in", { method: "POST", ...json({ email: "nobody@example.test", password: "whatever" }) });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(((await wrong.json()) as { error: { message: string } }).error.message);
  });

  it("backs off per client IP + account; a stranger elsewhere cannot lock the owner out", async () => {
    const org = await seedOrg();
    const attempt = (ip: string, password: string) =>
      call("/api/auth/sign-in", { method: "POST", body: JSON.stringify({ email: org.ownerEmail, password }), headers: { "content-type": "application/json", "cf-connecting-ip": ip } });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await attempt("203.0.113.66", "guess" + i);
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(((await res.json()) as { error: { type: string } }).error.type).toBe("rate_limit_error");
      }
    }
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(statuses.slice(6).every((s) => s === 429)).toBe(true);
    // The right password from the attacker's IP waits too; the owner's own IP is unaffected.
    expect((await attempt("203.0.113.66", org.ownerPassword)).status).toBe(429);
    expect((await attempt("198.51.100.77", org.ownerPassword)).status).toBe(200);
  });

  it("rate-limits attempts per client IP across e-mails", async () => {
    const ip = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    let limited = 0;
    for (let i = 0; i < 52; i++) {
      const res = await call("/api/auth/sign-in", { method: "POST", body: JSON.stringify({ email: `u${i}-${ip}@example.test`, password: "x" }), headers: { "content-type": "application/json", "cf-connecting-ip": ip } });
      if (res.status === 429) limited++;
    }
    expect(limited).toBe(2);
  });

  it("requires a session, the CSRF token and a same-site origin; sign-out ends the session", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    expect((await call("/api/keys")).status).toBe(401);
    expect((await api(s, "/keys")).status).toBe(200);
    const body = JSON.stringify({ projectId: org.projectId, description: "x" });
    const noCsrf = await api(s, "/keys", { method: "POST", body, csrf: false });
    expect(noCsrf.status).toBe(403);
    const cross = await api(s, "/keys", { method: "POST", body, headers: { origin: "https://evil.example" } });
    expect(cross.status).toBe(403);
    const crossSignIn = await call("/api/auth/sign-in", { method: "POST", ...json({ email: org.ownerEmail, password: org.ownerPassword }), headers: { "content-type": "application/json", origin: "https://evil.example" } });
    expect(crossSignIn.status).toBe(403);
    expect((await api(s, "/keys", { method: "POST", body, headers: { origin: "http://gw.test" } })).status).toBe(201);

    const out = await api(s, "/auth/sign-out", { method: "POST" });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await api(s, "/keys")).status).toBe(401);
  });
});

describe("dashboard keys", () => {
  it("creates a key with a TTL; past it the key is refused with 401 expired at once, the job marks it inactive", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const key = await newKey(s, org, { expiresIn: { value: 30, unit: "minute" } });
    const exp = Date.parse(key.expiresAt!);
    expect(exp - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(exp - Date.now()).toBeLessThanOrEqual(30 * 60_000);
    const days = await newKey(s, org, { expiresIn: { value: 2, unit: "day" } });
    expect(Date.parse(days.expiresAt!) - Date.now()).toBeGreaterThan(47 * 3_600_000);
    const none = await newKey(s, org);
    expect(none.expiresAt).toBeNull();

    // Shorten the TTL to just ahead of now and let it pass.
    const soon = new Date(Date.now() + 600).toISOString();
    expect((await api(s, `/keys/${key.id}`, { method: "PATCH", body: JSON.stringify({ expiresAt: soon }) })).status).toBe(200);
    const ctx = await resolveGatewayKey(env, key.token!);
    await checkKey(env, ctx);
    await new Promise((r) => setTimeout(r, 700));
    expect(await rejection(checkKey(env, ctx))).toMatchObject({ status: 401, code: "key_expired" });
    expect(await rejection(resolveGatewayKey(env, key.token!))).toMatchObject({ status: 401, code: "key_expired" });

    const ctl = createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" });
    const ectx = createExecutionContext();
    worker.scheduled(ctl, env, ectx);
    await waitOnExecutionContext(ectx);
    const detail = ((await (await api(s, `/keys/${key.id}`)).json()) as { apiKey: KeyJson }).apiKey;
    expect(detail).toMatchObject({ status: "inactive", expired: true });
    const other = ((await (await api(s, `/keys/${none.id}`)).json()) as { apiKey: KeyJson }).apiKey;
    expect(other.status).toBe("active");

    // Enabling needs a new future expiration.
    let res = await api(s, `/keys/${key.id}`, { method: "PATCH", body: JSON.stringify({ status: "active" }) });
    expect(res.status).toBe(400);
    res = await api(s, `/keys/${key.id}`, { method: "PATCH", body: JSON.stringify({ status: "active", expiresAt: new Date(Date.now() - 1000).toISOString() }) });
    expect(res.status).toBe(400);
    res = await api(s, `/keys/${key.id}`, { method: "PATCH", body: JSON.stringify({ status: "active", expiresAt: new Date(Date.now() + 3_600_000).toISOString() }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { apiKey: KeyJson }).apiKey).toMatchObject({ status: "active", expired: false });
    const again = await resolveGatewayKey(env, key.token!);
    expect((await checkKey(env, again)).key.id).toBe(key.id);
    // Removing the TTL is allowed too.
    res = await api(s, `/keys/${key.id}`, { method: "PATCH", body: JSON.stringify({ expiresAt: null }) });
    expect(((await res.json()) as { apiKey: KeyJson }).apiKey.expiresAt).toBeNull();
  });

  it("validates expiresIn", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    for (const expiresIn of [{ value: 0, unit: "minute" }, { value: 1, unit: "week" }, { value: 1.5, unit: "hour" }, { value: 4000, unit: "day" }]) {
      const res = await api(s, "/keys", { method: "POST", body: JSON.stringify({ projectId: org.projectId, description: "x", expiresIn }) });
      expect(res.status, JSON.stringify(expiresIn)).toBe(400);
    }
    // expiresAt is any ISO 8601 date or time: a calendar date is its midnight UTC; other text is a 400.
    for (const [value, at] of [["2099-03-04", "2099-03-04T00:00:00.000Z"], ["2099-03-04T10:30+02:00", "2099-03-04T08:30:00.000Z"]] as const) {
      const res = await api(s, `/keys/${org.keyId}`, { method: "PATCH", body: JSON.stringify({ expiresAt: value }) });
      expect(res.status, value).toBe(200);
      expect(((await res.json()) as { apiKey: KeyJson }).apiKey.expiresAt).toBe(at);
    }
    expect((await api(s, `/keys/${org.keyId}`, { method: "PATCH", body: JSON.stringify({ expiresAt: "next week" }) })).status).toBe(400);
  });

  it("disable and enable through the dashboard", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const ctx = await resolveGatewayKey(env, org.key);
    expect((await api(s, `/keys/${org.keyId}`, { method: "PATCH", body: JSON.stringify({ status: "inactive" }) })).status).toBe(200);
    expect(await rejection(checkKey(env, ctx))).toMatchObject({ code: "key_disabled" });
    expect((await api(s, `/keys/${org.keyId}`, { method: "PATCH", body: JSON.stringify({ status: "active" }) })).status).toBe(200);
    await checkKey(env, await resolveGatewayKey(env, org.key));
  });

  it("rolls in place: new secret once, old secret 401 rolled at once, everything else kept", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const key = await newKey(s, org, { description: "rollme", usageLimit: "7", expiresIn: { value: 3, unit: "day" } });
    await call(`/v1/master/keys/${key.id}/iam`, { method: "POST", key: org.masterKey, ...json({ ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } }) });
    const oldCtx = await resolveGatewayKey(env, key.token!);
    await checkKey(env, oldCtx);

    const res = await api(s, `/keys/${key.id}/roll`, { method: "POST" });
    expect(res.status).toBe(200);
    const rolled = ((await res.json()) as { apiKey: KeyJson }).apiKey;
    expect(rolled.token).toMatch(/^swb_[A-Za-z0-9]{40}$/);
    expect(rolled.token).not.toBe(key.token);
    expect(rolled).toMatchObject({ id: key.id, description: "rollme", usageLimit: "7", expiresAt: key.expiresAt, status: "active" });

    expect(await rejection(checkKey(env, oldCtx))).toMatchObject({ status: 401, code: "key_rolled" });
    expect(await rejection(resolveGatewayKey(env, key.token!))).toMatchObject({ status: 401, code: "key_rolled" });
    const fresh = await checkKey(env, await resolveGatewayKey(env, rolled.token!));
    expect(fresh.key.id).toBe(key.id);
    expect(fresh.rules.key.map((r) => r.ruleType)).toEqual(["deny_models"]);
    const row = await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, key.id)).get();
    expect(row?.lastRolledAt).not.toBeNull();
  });

  it("the playground key cannot be rolled (403) or deleted", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    expect((await api(s, `/keys/${org.playgroundKeyId}/roll`, { method: "POST" })).status).toBe(403);
    expect((await api(s, `/keys/${org.playgroundKeyId}`, { method: "DELETE" })).status).toBe(403);
    await checkKey(env, await resolveGatewayKey(env, org.playgroundKey));
  });

  it("deletes a key (401 deleted afterwards)", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const key = await newKey(s, org);
    expect((await api(s, `/keys/${key.id}`, { method: "DELETE" })).status).toBe(200);
    expect(await rejection(resolveGatewayKey(env, key.token!))).toMatchObject({ code: "key_deleted" });
    expect((await api(s, `/keys/${key.id}`)).status).toBe(404);
  });

  it("developers manage only their own keys; admins manage all", async () => {
    const org = await seedOrg();
    const dev = await addMember(org, "developer");
    const admin = await addMember(org, "admin");
    const ds = await signIn(dev.email, dev.password);
    const as = await signIn(admin.email, admin.password);
    const devKey = await newKey(ds, org, { description: "mine" });
    expect(devKey.createdBy).toBe(dev.id);

    const devList = ((await (await api(ds, "/keys")).json()) as { apiKeys: KeyJson[] }).apiKeys;
    expect(devList.map((k) => k.id)).toEqual([devKey.id]);
    expect((await api(ds, `/keys/${org.keyId}`)).status).toBe(404);
    expect((await api(ds, `/keys/${org.keyId}`, { method: "PATCH", body: JSON.stringify({ description: "pwned" }) })).status).toBe(404);
    expect((await api(ds, `/keys/${org.keyId}/roll`, { method: "POST" })).status).toBe(404);
    expect((await api(ds, `/keys/${devKey.id}/roll`, { method: "POST" })).status).toBe(200);

    const adminList = ((await (await api(as, "/keys")).json()) as { apiKeys: KeyJson[] }).apiKeys.map((k) => k.id);
    expect(adminList).toEqual(expect.arrayContaining([devKey.id, org.keyId, org.playgroundKeyId]));
    expect((await api(as, `/keys/${devKey.id}`, { method: "PATCH", body: JSON.stringify({ description: "by admin" }) })).status).toBe(200);

    const other = await seedOrg();
    expect((await api(as, `/keys/${other.keyId}`)).status).toBe(404);
    expect((await api(as, "/keys", { method: "POST", body: JSON.stringify({ projectId: other.projectId, description: "x" }) })).status).toBe(404);
  });

  it("a developer cannot re-enable a key or clear limits an owner or admin set; their own they can", async () => {
    const org = await seedOrg();
    const dev = await addMember(org, "developer");
    const ds = await signIn(dev.email, dev.password);
    const as = await signIn(org.ownerEmail, org.ownerPassword);
    const devKey = await newKey(ds, org, { description: "dev key", usageLimit: "5" });
    const patch = (s: Session, body: unknown) => api(s, `/keys/${devKey.id}`, { method: "PATCH", body: JSON.stringify(body) });

    // Their own limit and their own disable: theirs to change.
    expect((await patch(ds, { usageLimit: "8" })).status).toBe(200);
    expect((await patch(ds, { status: "inactive" })).status).toBe(200);
    expect((await patch(ds, { status: "active" })).status).toBe(200);

    // The owner disables the key and caps it.
    expect((await patch(as, { status: "inactive", usageLimit: "1" })).status).toBe(200);
    const enable = await patch(ds, { status: "active" });
    expect(enable.status).toBe(403);
    expect(((await enable.json()) as { error: { code: string } }).error.code).toBe("key_managed");
    expect((await patch(ds, { usageLimit: null })).status).toBe(403);
    expect((await patch(ds, { periodUsageLimit: "100", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" })).status).toBe(403);
    // Renaming and disabling again stay allowed.
    expect((await patch(ds, { description: "renamed" })).status).toBe(200);
    const detail = (await (await api(as, `/keys/${devKey.id}`)).json()) as { apiKey: { status: string; usageLimit: string | null } };
    expect(detail.apiKey).toMatchObject({ status: "inactive", usageLimit: "1" });

    // The master API counts as an owner too.
    expect((await patch(as, { status: "active" })).status).toBe(200);
    const viaMaster = await call(`/v1/master/keys/${devKey.id}`, { method: "PATCH", key: org.masterKey, ...json({ status: "inactive" }) });
    expect(viaMaster.status).toBe(200);
    expect((await patch(ds, { status: "active" })).status).toBe(403);
  });

  it("member rules from the dashboard: admins cannot modify an owner's rules (spec 5 rule 6), developers none", async () => {
    const org = await seedOrg();
    const dev = await addMember(org, "developer");
    const admin = await addMember(org, "admin");
    const ds = await signIn(dev.email, dev.password);
    const as = await signIn(admin.email, admin.password);
    const os = await signIn(org.ownerEmail, org.ownerPassword);
    const rule = { ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } };
    const post = (s: Session, member: string) => api(s, `/members/${member}/iam`, { method: "POST", body: JSON.stringify(rule) });

    expect((await post(as, dev.id)).status).toBe(201);
    const refused = await post(as, org.ownerMemberId);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("owner_rules");
    expect((await api(as, `/members/${org.ownerMemberId}/iam`)).status).toBe(200); // reading is fine
    const created = await post(os, org.ownerMemberId);
    expect(created.status).toBe(201);
    const ruleId = ((await created.json()) as { rule: { id: string } }).rule.id;
    expect((await api(as, `/members/${org.ownerMemberId}/iam/${ruleId}`, { method: "DELETE" })).status).toBe(403);
    expect((await api(as, `/members/${org.ownerMemberId}/iam/${ruleId}`, { method: "PATCH", body: JSON.stringify({ status: "inactive" }) })).status).toBe(403);
    expect((await api(os, `/members/${org.ownerMemberId}/iam/${ruleId}`, { method: "DELETE" })).status).toBe(200);
    expect((await post(ds, dev.id)).status).toBe(403);
    // Another organization's member is a 404.
    const other = await seedOrg();
    expect((await post(os, other.ownerMemberId)).status).toBe(404);
  });
});
