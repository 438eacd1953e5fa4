/**
 * The dashboard's Audit log page at the HTTP level: owners and admins see the entries the shared
 * actions layer recorded (time, actor, action, target, IP), filter by action, page with the cursor
 * and export CSV; developers get neither the link nor the page.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { recordAuditEntry } from "../../src/audit/store";
import { signIn, type Session } from "./session";

const page = (s: Session, path: string): Promise<Response> => call(path, { redirect: "manual", headers: { cookie: s.cookie, accept: "text/html" } });

async function memberSession(org: SeededOrg, role: "admin" | "developer"): Promise<Session> {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.test`;
  const password = "another long password";
  const res = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: role, role, password }) });
  expect(res.status).toBe(201);
  return signIn(email, password);
}

const unescape = (s: string): string => s.replace(/&amp;/g, "&");

describe("dashboard audit log page", () => {
  it("lists what the master API changed, with actor, action, target and IP, linked from the navigation", async () => {
    const org = await seedOrg();
    const created = await call("/v1/master/keys", { method: "POST", key: org.masterKey, ...json({ projectId: org.projectId, description: "audited" }), headers: { "content-type": "application/json", "cf-connecting-ip": "203.0.113.9" } });
    expect(created.status).toBe(201);
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const keysHtml = await (await page(s, "/dashboard/keys")).text();
    expect(keysHtml).toMatch(/href="\/dashboard\/audit-log[^"]*"[^>]*>Audit log</);
    const res = await page(s, "/dashboard/audit-log");
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const h of ["Time", "Actor", "Action", "Target", "IP"]) expect(html).toContain(`<th scope="col">${h}</th>`);
    expect(html).toContain("<code>key.create</code>");
    expect(html).toContain("203.0.113.9");
    expect(html).toMatch(/master key [A-Za-z0-9_-]+/);
    const csv = html.match(/href="(\/api\/audit-log\?[^"]*format=csv[^"]*)"/);
    expect(csv).not.toBeNull();
    const exported = await call(unescape(csv![1]!), { headers: { cookie: s.cookie } });
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toContain("text/csv");
    expect(await exported.text()).toContain("key.create");
  });

  it("filters by action and pages with the cursor", async () => {
    const org = await seedOrg();
    const base = Date.now() - 60_000;
    for (let i = 0; i < 55; i++) {
      await recordAuditEntry(env, { organizationId: org.orgId, actor: { type: "member", id: org.ownerMemberId, email: "seeded@example.test" }, action: "key.update", target: { type: "key", id: `key_${i}` }, ip: "198.51.100.1", at: base + i });
    }
    await recordAuditEntry(env, { organizationId: org.orgId, actor: { type: "master_key", id: "mk_x" }, action: "iam_rule.create", target: { type: "key", id: "key_rule" }, ip: null, at: base + 100 });
    const s = await signIn(org.ownerEmail, org.ownerPassword);

    const filtered = await (await page(s, "/dashboard/audit-log?action=iam_rule.create")).text();
    expect(filtered).toContain("<code>iam_rule.create</code>");
    expect(filtered).not.toContain("<code>key.update</code>");
    expect(filtered).toMatch(/href="\/api\/audit-log\?[^"]*action=iam_rule.create/);

    const first = await (await page(s, "/dashboard/audit-log?action=key.update")).text();
    expect(first).toContain("<code>key_54</code>");
    expect(first).not.toContain("<code>key_4</code>");
    const older = first.match(/href="(\/dashboard\/audit-log\?[^"]*cursor=[^"]*)"[^>]*>\s*Older entries/);
    expect(older).not.toBeNull();
    const second = await (await page(s, unescape(older![1]!))).text();
    expect(second).toContain("<code>key_4</code>");
    expect(second).toContain("<code>key_0</code>");
    expect(second).not.toContain("<code>key_54</code>");
    expect(second).not.toContain("Older entries");

    // A bad filter falls back to the whole log instead of an error page.
    expect((await page(s, "/dashboard/audit-log?action=%3Cscript%3E")).status).toBe(200);
  });

  it("admins read it; developers get 403 and no navigation link", async () => {
    const org = await seedOrg();
    const admin = await memberSession(org, "admin");
    expect((await page(admin, "/dashboard/audit-log")).status).toBe(200);
    const dev = await memberSession(org, "developer");
    const res = await page(dev, "/dashboard/audit-log");
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Only owners and admins");
    expect(await (await page(dev, "/dashboard/keys")).text()).not.toContain("/dashboard/audit-log");
    expect((await call("/api/audit-log", { headers: { cookie: dev.cookie } })).status).toBe(403);
  });
});
