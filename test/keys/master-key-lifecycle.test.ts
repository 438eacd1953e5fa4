/**
 * Master keys with a lifecycle: create, list, roll and revoke through the
 * master API, the operator API and the dashboard (owners only); a revoked or rolled secret is
 * refused at once; the last active key cannot be revoked.
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { signIn, type Session } from "../dashboard/session";

interface MasterKeyJson {
  id: string;
  prefix: string;
  description: string;
  status: "active" | "revoked";
  createdBy: { via: string; id: string | null };
  lastUsedAt: string | null;
  lastRolledAt: string | null;
  revokedAt: string | null;
  token?: string;
  [k: string]: unknown;
}

const master = (key: string, path: string, init: RequestInit = {}) => call(`/v1/master${path}`, { ...init, key });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

async function createVia(key: string, description: string): Promise<MasterKeyJson> {
  const res = await master(key, "/master-keys", { method: "POST", ...json({ description }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { masterKey: MasterKeyJson }).masterKey;
}

async function list(key: string): Promise<MasterKeyJson[]> {
  const res = await master(key, "/master-keys");
  expect(res.status).toBe(200);
  return ((await res.json()) as { masterKeys: MasterKeyJson[] }).masterKeys;
}

function api(s: Session, path: string, method = "GET", body?: unknown): Promise<Response> {
  const headers = new Headers({ cookie: s.cookie, "x-csrf-token": s.csrf });
  if (body !== undefined) headers.set("content-type", "application/json");
  return call(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const bootstrapKeyId = async (org: SeededOrg) => (await list(org.masterKey))[0]!.id;

describe("master keys through the master API", () => {
  it("create shows the secret once; the list shows prefix, creator, description, last use, never a secret", async () => {
    const org = await seedOrg();
    const before = await list(org.masterKey);
    expect(before).toHaveLength(1);
    expect(before[0]!.createdBy.via).toBe("bootstrap");
    const created = await createVia(org.masterKey, "CI provisioning");
    expect(created.token).toMatch(/^swbm_[A-Za-z0-9]{40}$/);
    expect(created.prefix.startsWith(created.token!.slice(0, 9))).toBe(true);
    expect(created.createdBy).toEqual({ via: "master_api", id: before[0]!.id });
    // the new key works
    expect((await master(created.token!, "/organization")).status).toBe(200);
    const after = await list(created.token!);
    expect(after.map((k) => k.id)).toEqual([before[0]!.id, created.id]);
    const text = JSON.stringify(after);
    expect(text).not.toContain(created.token!);
    expect(text).not.toContain("fingerprint");
    expect(after[1]!.description).toBe("CI provisioning");
    // both keys were used: last use is recorded (off the request path)
    await new Promise((r) => setTimeout(r, 50));
    const used = await list(org.masterKey);
    expect(used.every((k) => k.lastUsedAt !== null)).toBe(true);
  });

  it("a revoked key is refused on the very next request; the last active one cannot be revoked (409)", async () => {
    const org = await seedOrg();
    const firstId = await bootstrapKeyId(org);
    // alone: revoking it (even by itself) is a 409 with a clear message
    const alone = await master(org.masterKey, `/master-keys/${firstId}`, { method: "DELETE" });
    expect(alone.status).toBe(409);
    const err = await errorOf(alone);
    expect(err.code).toBe("last_master_key");
    expect(err.message).toMatch(/last active master key/);
    expect((await master(org.masterKey, "/organization")).status).toBe(200);

    const second = await createVia(org.masterKey, "second");
    const revoked = await master(second.token!, `/master-keys/${firstId}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as { masterKey: MasterKeyJson }).masterKey.status).toBe("revoked");
    const refused = await master(org.masterKey, "/organization");
    expect(refused.status).toBe(401);
    expect((await errorOf(refused)).code).toBe("invalid_master_key");
    // now the second is the last one
    const last = await master(second.token!, `/master-keys/${second.id}`, { method: "DELETE" });
    expect(last.status).toBe(409);
    // revoking twice answers the revoked key, not an error
    expect((await master(second.token!, `/master-keys/${firstId}`, { method: "DELETE" })).status).toBe(200);
  });

  it("two concurrent revocations of the last two keys leave one active", async () => {
    const org = await seedOrg();
    const firstId = await bootstrapKeyId(org);
    const second = await createVia(org.masterKey, "second");
    const [a, b] = await Promise.all([
      master(second.token!, `/master-keys/${firstId}`, { method: "DELETE" }),
      master(org.masterKey, `/master-keys/${second.id}`, { method: "DELETE" }),
    ]);
    // one passes; the other is refused: 409 (last key) or 401 (its own key was revoked first)
    expect([a.status, b.status].filter((s) => s === 200)).toHaveLength(1);
    expect([a.status, b.status].every((s) => s === 200 || s === 409 || s === 401)).toBe(true);
    const keys = await list(a.status === 200 ? second.token! : org.masterKey);
    expect(keys.filter((k) => k.status === "active")).toHaveLength(1);
  });

  it("roll: a new secret for the same key; the old secret is refused at once", async () => {
    const org = await seedOrg();
    const id = await bootstrapKeyId(org);
    const res = await master(org.masterKey, `/master-keys/${id}/roll`, { method: "POST" });
    expect(res.status).toBe(200);
    const rolled = ((await res.json()) as { masterKey: MasterKeyJson }).masterKey;
    expect(rolled.id).toBe(id);
    expect(rolled.token).toMatch(/^swbm_/);
    expect(rolled.token).not.toBe(org.masterKey);
    expect(rolled.lastRolledAt).not.toBeNull();
    expect((await master(org.masterKey, "/organization")).status).toBe(401);
    expect((await master(rolled.token!, "/organization")).status).toBe(200);
  });

  it("another organization's key ids are 404; unknown fields are 400", async () => {
    const a = await seedOrg();
    const b = await seedOrg();
    const bId = await bootstrapKeyId(b);
    expect((await master(a.masterKey, `/master-keys/${bId}`, { method: "DELETE" })).status).toBe(404);
    expect((await master(a.masterKey, `/master-keys/${bId}/roll`, { method: "POST" })).status).toBe(404);
    expect((await master(b.masterKey, "/organization")).status).toBe(200);
    const bad = await master(a.masterKey, "/master-keys", { method: "POST", ...json({ description: "x", organizationId: "org_x" }) });
    expect(bad.status).toBe(400);
  });
});

describe("master keys through the operator API", () => {
  it("the operator creates a master key for an organization whose keys all leaked", async () => {
    const org = await seedOrg();
    const res = await call(`/v1/admin/organizations/${org.orgId}/master-keys`, { method: "POST", key: TEST_SECRETS.ADMIN_TOKEN, ...json({ description: "recovery" }) });
    expect(res.status).toBe(201);
    const mk = ((await res.json()) as { masterKey: MasterKeyJson }).masterKey;
    expect(mk.createdBy.via).toBe("admin");
    expect((await master(mk.token!, "/organization")).status).toBe(200);
    const listed = await call(`/v1/admin/organizations/${org.orgId}/master-keys`, { key: TEST_SECRETS.ADMIN_TOKEN });
    expect(((await listed.json()) as { masterKeys: unknown[] }).masterKeys).toHaveLength(2);
    expect((await call(`/v1/admin/organizations/org_missing/master-keys`, { method: "POST", key: TEST_SECRETS.ADMIN_TOKEN, ...json({}) })).status).toBe(404);
    expect((await call(`/v1/admin/organizations/${org.orgId}/master-keys`, { method: "POST", key: org.masterKey, ...json({}) })).status).toBe(401);
  });
});

describe("master keys in the dashboard", () => {
  it("owners create, roll and revoke; admins get 403; the Platform page lists them", async () => {
    const org = await seedOrg();
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const created = await api(owner, "/master-keys", "POST", { description: "from the dashboard" });
    expect(created.status).toBe(201);
    const mk = ((await created.json()) as { masterKey: MasterKeyJson }).masterKey;
    expect(mk.createdBy).toEqual({ via: "dashboard", id: org.ownerMemberId });
    expect((await master(mk.token!, "/organization")).status).toBe(200);
    const rolled = await api(owner, `/master-keys/${mk.id}/roll`, "POST");
    expect(rolled.status).toBe(200);
    const rolledPrefix = ((await rolled.json()) as { masterKey: MasterKeyJson }).masterKey.prefix;
    expect((await master(mk.token!, "/organization")).status).toBe(401);
    expect((await api(owner, `/master-keys/${mk.id}`, "DELETE")).status).toBe(200);
    const firstId = await bootstrapKeyId(org);
    const last = await api(owner, `/master-keys/${firstId}`, "DELETE");
    expect(last.status).toBe(409);

    const page = await call("/dashboard/platform", { headers: { cookie: owner.cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Master keys");
    expect(html).toContain("from the dashboard");
    expect(html).toContain(rolledPrefix);

    const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const password = "another long password";
    expect((await master(org.masterKey, "/members", { method: "POST", ...json({ email, name: "A", role: "admin", password }) })).status).toBe(201);
    const admin = await signIn(email, password);
    const refused = await api(admin, "/master-keys");
    expect(refused.status).toBe(403);
    expect((await api(admin, "/master-keys", "POST", {})).status).toBe(403);
  });
});
