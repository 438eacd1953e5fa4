/**
 * One organization must not take over another organization's member
 * (contract section 5). Every variant of the report, plus the acceptance flow.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { budgetAlertRecipients } from "../../src/billing/budget-alerts";
import { accept, captureMail, email, sent, tokenFor } from "../helpers/mail";

type Json = Record<string, unknown>;
captureMail();

const PW_B = "attacker chosen password";
const PW_A = "password chosen by org A";

function addMember(org: SeededOrg, body: Json): Promise<Response> {
  return call("/v1/master/members", { method: "POST", key: org.masterKey, ...json(body) });
}

function signIn(addr: string, password: string, organizationId?: string): Promise<Response> {
  return call("/api/auth/sign-in", { method: "POST", ...json({ email: addr, password, ...(organizationId ? { organizationId } : {}) }) });
}

describe("members across organizations (contract section 5)", () => {
  it("A adds v without a password, B adds v with its password: B cannot sign in to A", async () => {
    const [a, b] = [await seedOrg(), await seedOrg()];
    const v = email("v");
    expect((await addMember(a, { email: v, name: "Victim", role: "admin" })).status).toBe(201);
    expect((await addMember(b, { email: v, name: "Whoever", role: "developer", password: PW_B })).status).toBe(201);
    const res = await signIn(v, PW_B, a.orgId);
    expect(res.status).toBe(401);
    // Nothing tells the attacker that the password was right: same answer as a wrong one.
    const wrong = await signIn(v, "definitely not the password", a.orgId);
    expect(await res.json()).toEqual(await wrong.json());
    // The account existed, so B's password was ignored: it opens nothing, not even B.
    expect((await signIn(v, PW_B, b.orgId)).status).toBe(401);
    expect((await signIn(v, PW_B)).status).toBe(401);
  });

  it("B registers v first, then A adds v as owner with A's own password: neither password opens A", async () => {
    const [a, b] = [await seedOrg(), await seedOrg()];
    const v = email("owner-seat");
    expect((await addMember(b, { email: v, name: "Planted", role: "developer", password: PW_B })).status).toBe(201);
    expect((await addMember(a, { email: v, name: "Real Owner", role: "owner", password: PW_A })).status).toBe(201);
    expect((await signIn(v, PW_B, a.orgId)).status).toBe(401);
    expect((await signIn(v, PW_A, a.orgId)).status).toBe(401);
    // Without organizationId, B's password still opens only B.
    const any = (await (await signIn(v, PW_B)).json()) as { organization: { id: string } };
    expect(any.organization.id).toBe(b.orgId);
  });

  it("adding an e-mail that already has an account answers exactly like a new one", async () => {
    const [a, b] = [await seedOrg(), await seedOrg()];
    const existing = email("existing");
    const fresh = email("fresh");
    expect((await addMember(b, { email: existing, name: "Real Name In B", role: "admin", password: PW_B })).status).toBe(201);
    sent.length = 0;
    const r1 = await addMember(a, { email: existing, name: "Given", role: "developer", password: PW_A });
    const r2 = await addMember(a, { email: fresh, name: "Given", role: "developer", password: PW_A });
    expect(r1.status).toBe(r2.status);
    const [m1, m2] = [((await r1.json()) as { member: Json }).member, ((await r2.json()) as { member: Json }).member];
    const shape = (m: Json) => ({ ...m, id: "x", email: "x", createdAt: "x" });
    expect(shape(m1)).toEqual(shape(m2));
    expect(m1).toMatchObject({ name: "Given", status: "pending" });
    expect(m1).not.toHaveProperty("userId");
    expect(JSON.stringify(m1)).not.toContain("Real Name In B");
    // The list agrees: same status for both, the name A gave.
    const list = (await (await call("/v1/master/members", { key: a.masterKey })).json()) as { members: Json[] };
    const byEmail = new Map(list.members.map((m) => [m.email, m]));
    expect(byEmail.get(existing)).toMatchObject({ status: "pending", name: "Given" });
    expect(byEmail.get(fresh)).toMatchObject({ status: "pending", name: "Given" });
    // Both got the same kind of e-mail.
    expect(sent.filter((m) => m.to === existing || m.to === fresh)).toHaveLength(2);
  });

  it("the person accepts with the e-mailed token, sets their own password, and only then opens A", async () => {
    const [a, b] = [await seedOrg({ name: "Acme" }), await seedOrg()];
    const v = email("accept");
    await addMember(b, { email: v, name: "Planted", role: "developer", password: PW_B });
    await addMember(a, { email: v, name: "V", role: "admin" });
    const token = tokenFor(v);

    const preview = await call("/api/memberships/preview", { method: "POST", ...json({ token }) });
    expect(await preview.json()).toMatchObject({ organization: { id: a.orgId, name: "Acme" }, email: v, role: "admin", passwordRequired: true });
    // The account's password was chosen by B: accepting must replace it.
    const noPw = await accept(token);
    expect(noPw.status).toBe(400);
    expect(((await noPw.json()) as { error: Json }).error).toMatchObject({ param: "password", code: "password_required" });

    const own = "my very own password";
    const ok = await accept(token, own);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ organization: { id: a.orgId }, member: { role: "admin" } });
    expect((await accept(token, own)).status).toBe(400); // one-time

    expect((await signIn(v, own, a.orgId)).status).toBe(200);
    expect((await signIn(v, PW_B, a.orgId)).status).toBe(401);
    expect((await signIn(v, PW_B, b.orgId)).status).toBe(401); // B's password is gone everywhere
    const list = (await (await call("/v1/master/members", { key: a.masterKey })).json()) as { members: Json[] };
    expect(list.members.find((m) => m.email === v)).toMatchObject({ status: "active" });
  });

  it("an account with its own password accepts without changing it; tokens are checked", async () => {
    const [a, b] = [await seedOrg(), await seedOrg()];
    // a's owner has their own password (bootstrap). B adds them: pending, B's password ignored.
    expect((await addMember(b, { email: a.ownerEmail, name: "X", role: "owner", password: PW_B })).status).toBe(201);
    expect((await signIn(a.ownerEmail, PW_B, b.orgId)).status).toBe(401);
    expect((await signIn(a.ownerEmail, a.ownerPassword, b.orgId)).status).toBe(401); // pending
    const token = tokenFor(a.ownerEmail);
    expect((await accept("not-a-real-token-00000000000000")).status).toBe(400);
    expect((await accept(token)).status).toBe(200);
    expect((await signIn(a.ownerEmail, a.ownerPassword, b.orgId)).status).toBe(200);
    expect((await signIn(a.ownerEmail, a.ownerPassword, a.orgId)).status).toBe(200);
  });

  it("budget e-mails go only to accepted members", async () => {
    const [a, b] = [await seedOrg(), await seedOrg()];
    await addMember(b, { email: a.ownerEmail, name: "X", role: "admin" });
    expect(await budgetAlertRecipients(env, b.orgId)).toEqual([b.ownerEmail]);
    await accept(tokenFor(a.ownerEmail));
    expect((await budgetAlertRecipients(env, b.orgId)).sort()).toEqual([a.ownerEmail, b.ownerEmail].sort());
  });

  it("a pending member can be sent a fresh invitation; the old token stops working", async () => {
    const a = await seedOrg();
    const v = email("resend");
    const created = ((await (await addMember(a, { email: v, name: "V", role: "developer" })).json()) as { member: { id: string } }).member;
    const first = tokenFor(v);
    expect((await call(`/v1/master/members/${created.id}/invitation`, { method: "POST", key: a.masterKey })).status).toBe(202);
    const second = tokenFor(v);
    expect(second).not.toBe(first);
    expect((await accept(first, "a fresh password here")).status).toBe(400);
    expect((await accept(second, "a fresh password here")).status).toBe(200);
    expect((await call(`/v1/master/members/${created.id}/invitation`, { method: "POST", key: a.masterKey })).status).toBe(409);
  });
});
