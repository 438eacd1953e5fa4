/**
 * The audit log (contract section 8): every state-changing call of the master API, the session
 * API and the operator API makes exactly one entry, with who, what, the target, the state before
 * and after as its GET route shows it (never a secret), and the caller's IP; read newest first,
 * paged, scoped to the organization, exported as CSV.
 */
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { describeCall } from "../../src/audit/describe";
import { call, json, seedOrg, TEST_SECRETS } from "../helpers/fixtures";
import { signIn } from "../dashboard/session";

interface Entry {
  id: string;
  at: string;
  actor: { type: string; id: string; email?: string };
  action: string;
  target: { type: string; id: string | null };
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  ip: string | null;
}

async function auditLog(masterKey: string, query = ""): Promise<{ entries: Entry[]; nextCursor: string | null }> {
  const res = await call(`/v1/master/audit-log${query}`, { key: masterKey });
  expect(res.status).toBe(200);
  return (await res.json()) as { entries: Entry[]; nextCursor: string | null };
}

describe("audit log", () => {
  it("a master key's key lifecycle and settings change make one entry each, newest first, without secrets", async () => {
    const org = await seedOrg();
    const ip = { "cf-connecting-ip": "203.0.113.9" };
    const created = await call("/v1/master/keys", { method: "POST", key: org.masterKey, ...json({ projectId: org.projectId, description: "audited", usageLimit: "5" }), headers: { "content-type": "application/json", ...ip } });
    expect(created.status).toBe(201);
    const { apiKey } = (await created.json()) as { apiKey: { id: string; token: string } };
    const patched = await call(`/v1/master/keys/${apiKey.id}`, { method: "PATCH", key: org.masterKey, ...json({ usageLimit: "7" }) });
    expect(patched.status).toBe(200);
    // A refused change makes no entry.
    const refused = await call(`/v1/master/keys/${apiKey.id}`, { method: "PATCH", key: org.masterKey, ...json({ usageLimit: "lots" }) });
    expect(refused.status).toBe(400);
    const orgPatch = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ notifications: { thresholdPercent: 70 } }) });
    expect(orgPatch.status).toBe(200);
    expect((await call(`/v1/master/keys/${apiKey.id}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);

    const { entries } = await auditLog(org.masterKey);
    expect(entries.map((e) => e.action)).toEqual(["key.delete", "organization.update", "key.update", "key.create"]);
    for (const e of entries) expect(e.actor).toEqual({ type: "master_key", id: expect.stringMatching(/.+/) });
    const [del, orgUpdate, update, create] = entries as [Entry, Entry, Entry, Entry];
    expect(create.target).toEqual({ type: "key", id: apiKey.id });
    expect(create.ip).toBe("203.0.113.9");
    expect(update.target).toEqual({ type: "key", id: apiKey.id });
    expect((update.before?.apiKey as { usageLimit: string }).usageLimit).toMatch(/^5(\.0+)?$/);
    expect((update.after?.apiKey as { usageLimit: string }).usageLimit).toMatch(/^7(\.0+)?$/);
    // The organization itself is the target: its id, as for the operator's top-up.
    expect(orgUpdate.target).toEqual({ type: "organization", id: org.orgId });
    expect(JSON.stringify(orgUpdate.after)).toContain("70");
    expect(del.before).toBeDefined();
    expect(del.after).toBeUndefined();
    // The key's secret never lands in an entry.
    expect(JSON.stringify(entries)).not.toContain(apiKey.token);
    expect(Date.parse(entries[0]!.at)).toBeGreaterThanOrEqual(Date.parse(entries[3]!.at));
  });

  it("pages with a cursor, filters by action and time, exports CSV, and shows another organization nothing", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    for (let i = 0; i < 3; i++) {
      expect((await call("/v1/master/keys", { method: "POST", key: org.masterKey, ...json({ projectId: org.projectId, description: `k${i}` }) })).status).toBe(201);
    }
    expect((await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ notifications: { thresholdPercent: 60 } }) })).status).toBe(200);

    const first = await auditLog(org.masterKey, "?limit=2");
    expect(first.entries).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = await auditLog(org.masterKey, `?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second.entries).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
    expect(new Set([...first.entries, ...second.entries].map((e) => e.id)).size).toBe(4);

    expect((await auditLog(org.masterKey, "?action=key.create")).entries).toHaveLength(3);
    expect((await auditLog(org.masterKey, "?to=2000-01-01T00:00:00Z")).entries).toHaveLength(0);
    // Any ISO 8601 date or time, as the request-log export takes: a calendar date, a time without seconds or with an offset.
    expect((await auditLog(org.masterKey, "?from=2000-01-01&to=2999-12-31")).entries).toHaveLength(4);
    expect((await auditLog(org.masterKey, `?from=${encodeURIComponent("2000-01-01T00:00+02:00")}`)).entries).toHaveLength(4);
    expect((await call("/v1/master/audit-log?from=yesterday", { key: org.masterKey })).status).toBe(400);
    expect((await call("/v1/master/audit-log?limit=0", { key: org.masterKey })).status).toBe(400);
    expect((await auditLog(other.masterKey)).entries).toHaveLength(0);

    const csv = await call("/v1/master/audit-log?format=csv", { key: org.masterKey });
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe("at,actor_type,actor_id,actor_email,action,target_type,target_id,ip,before,after");
    expect(lines).toHaveLength(5);
  });

  it("a dashboard member's change names the member; the operator's top-up lands in that organization", async () => {
    const org = await seedOrg();
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const headers = { cookie: s.cookie, "x-csrf-token": s.csrf, "content-type": "application/json" };
    expect((await call("/api/keys", { method: "POST", headers, body: JSON.stringify({ projectId: org.projectId, description: "from the dashboard" }) })).status).toBe(201);
    const topUp = await call(`/v1/admin/organizations/${org.orgId}/credits`, { method: "POST", key: TEST_SECRETS.ADMIN_TOKEN, ...json({ amount: "10.00", reason: "audit test", idempotencyKey: crypto.randomUUID() }) });
    expect(topUp.status).toBe(201);

    const { entries } = await auditLog(org.masterKey);
    expect(entries.map((e) => e.action)).toEqual(["credits.top_up", "key.create"]);
    expect(entries[0]!.actor).toEqual({ type: "operator", id: "operator" });
    expect(entries[0]!.target).toEqual({ type: "organization", id: org.orgId });
    expect(entries[1]!.actor).toEqual({ type: "member", id: org.ownerMemberId, email: org.ownerEmail });

    const viaSession = await call("/api/audit-log", { headers: { cookie: s.cookie } });
    expect(viaSession.status).toBe(200);
    expect(((await viaSession.json()) as { entries: Entry[] }).entries).toHaveLength(2);
  });

  it("the operator's bootstrap is the new organization's first entry, without its secrets", async () => {
    const boot = await call("/v1/admin/organizations", {
      method: "POST",
      key: TEST_SECRETS.ADMIN_TOKEN,
      ...json({ name: "Audited Co", plan: "pro", owner: { email: `boot-${crypto.randomUUID().slice(0, 8)}@example.test`, name: "Boot", password: "a long enough password" } }),
    });
    expect(boot.status).toBe(201);
    const created = (await boot.json()) as { organization: { id: string }; masterKey: { token: string } };
    const { entries } = await auditLog(created.masterKey.token);
    expect(entries.map((e) => [e.action, e.actor.type, e.target.id])).toEqual([["organization.create", "operator", created.organization.id]]);
    expect(JSON.stringify(entries)).not.toContain(created.masterKey.token);
  });

  it("every state-changing route of the audited APIs has an action name", () => {
    const unnamed: string[] = [];
    const names = new Set<string>();
    const skipped = new Set(["POST /api/auth/sign-in", "POST /api/auth/sign-out", "POST /api/memberships/preview", "POST /api/memberships/accept", "POST /api/playground/chat/completions"]);
    for (const r of app.routes) {
      if (!["POST", "PUT", "PATCH", "DELETE"].includes(r.method)) continue;
      if (!/^\/(v1\/master|v1\/admin|api)(\/|$)/.test(r.path) || skipped.has(`${r.method} ${r.path}`)) continue;
      const d = describeCall(r.method, r.path);
      if (!d) unnamed.push(`${r.method} ${r.path}`);
      else {
        expect(d.action, `${r.method} ${r.path}`).toMatch(/^[a-z_]+\.[a-z_]+$/);
        names.add(d.action);
      }
    }
    expect(unnamed).toEqual([]);
    for (const a of ["key.create", "key.update", "key.delete", "key.roll", "iam_rule.create", "member.create", "credits.top_up", "organization.update"]) expect(names).toContain(a);
  });
});
