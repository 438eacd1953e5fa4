/**
 * Smaller security findings, each failing on the code before the fix:
 *  - resending an invitation had no limit (30 calls sent 31 e-mails);
 *  - an e-mail another organization registered blocked operator bootstrap with it (409);
 *  - MCP get-account returned the global user id for a pending member's key;
 *  - the first request to a custom model created a moment ago failed once ("Unknown provider");
 *  - deny_ip_cidrs failed open when the client IP could not be parsed.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, seedOrg, TEST_SECRETS } from "../helpers/fixtures";
import { chat } from "../chat/helpers";
import { connectClient } from "../mcp/helpers";
import { INVITATIONS_PER_WINDOW } from "../../src/organizations/memberships";
import { accept, captureMail, email, sent, tokenFor } from "../helpers/mail";

captureMail();

const addMember = (masterKey: string, body: Record<string, unknown>) => call("/v1/master/members", { method: "POST", key: masterKey, ...json(body) });
const signIn = (addr: string, password: string, organizationId?: string) =>
  call("/api/auth/sign-in", { method: "POST", ...json({ email: addr, password, ...(organizationId ? { organizationId } : {}) }) });

describe("smaller security findings", () => {
  it("resending an invitation is rate limited (429 with retry-after), and so is removing and adding again", async () => {
    const org = await seedOrg();
    const v = email("resend");
    const created = await addMember(org.masterKey, { email: v, name: "V", role: "developer" });
    const memberId = ((await created.json()) as { member: { id: string } }).member.id;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await call(`/v1/master/members/${memberId}/invitation`, { method: "POST", key: org.masterKey })).status);
    expect(sent.filter((m) => m.to === v)).toHaveLength(INVITATIONS_PER_WINDOW);
    expect(statuses.filter((s) => s === 202)).toHaveLength(INVITATIONS_PER_WINDOW - 1);
    const refused = await call(`/v1/master/members/${memberId}/invitation`, { method: "POST", key: org.masterKey });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("invitation_rate_limited");
    // The last token sent still works.
    const token = tokenFor(v);
    expect((await call(`/v1/master/members/${memberId}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
    expect((await addMember(org.masterKey, { email: v, name: "V", role: "developer" })).status).toBe(429);
    expect(sent.filter((m) => m.to === v)).toHaveLength(INVITATIONS_PER_WINDOW);
    expect((await accept(token, "a long enough password")).status).toBe(400); // the member was removed
    // Another organization is not affected by this one's limit.
    const other = await seedOrg();
    expect((await addMember(other.masterKey, { email: v, name: "V", role: "developer" })).status).toBe(201);
  });

  it("an address another organization registered does not block operator bootstrap: the owner accepts the e-mailed invitation", async () => {
    const squatter = await seedOrg();
    const v = email("future-owner");
    expect((await addMember(squatter.masterKey, { email: v, name: "Planted", role: "developer", password: "squatter chosen password" })).status).toBe(201);
    const boot = await call("/v1/admin/organizations", {
      method: "POST",
      key: TEST_SECRETS.ADMIN_TOKEN,
      ...json({ name: "Real Co", plan: "pro", owner: { email: v, name: "Real Owner", password: "operator given password" } }),
    });
    expect(boot.status).toBe(201);
    const body = (await boot.json()) as { organization: { id: string }; masterKey: { token: string } };
    const orgId = body.organization.id;
    // The owner's membership is pending (the master API shows it) until the e-mailed token is used.
    const owners = (await (await call("/v1/master/members", { key: body.masterKey.token })).json()) as { members: Array<{ email: string; status: string }> };
    expect(owners.members.find((m) => m.email === v)?.status).toBe("pending");
    // Neither the squatter's password nor the one in the request opens the new organization.
    expect((await signIn(v, "squatter chosen password", orgId)).status).toBe(401);
    expect((await signIn(v, "operator given password", orgId)).status).toBe(401);
    // The e-mailed token does, with the person's own password.
    expect((await accept(tokenFor(v), "the owner's own password")).status).toBe(200);
    expect((await signIn(v, "the owner's own password", orgId)).status).toBe(200);
    // An account with its own password still needs that password (409 otherwise).
    const clash = await call("/v1/admin/organizations", {
      method: "POST",
      key: TEST_SECRETS.ADMIN_TOKEN,
      ...json({ name: "Other Co", plan: "pro", owner: { email: v, name: "X", password: "not the owner's password" } }),
    });
    expect(clash.status).toBe(409);
  });

  it("MCP get-account never returns the account id for a pending member's key", async () => {
    const home = await seedOrg();
    const inviter = await seedOrg();
    const added = await addMember(inviter.masterKey, { email: home.ownerEmail, name: "Guest", role: "developer" });
    const memberId = ((await added.json()) as { member: { id: string } }).member.id;
    const made = await call("/v1/master/keys", { method: "POST", key: inviter.masterKey, ...json({ projectId: inviter.projectId, description: "for guest", memberId }) });
    expect(made.status).toBe(201);
    const key = ((await made.json()) as { apiKey: { token: string } }).apiKey.token;
    const userId = (await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(home.ownerEmail).first<{ id: string }>())!.id;

    const client = await connectClient(key);
    const pending = await client.callTool({ name: "get-account", arguments: {} });
    expect(pending.isError ?? false).toBe(false);
    expect(JSON.stringify(pending)).not.toContain(userId);
    expect((pending.structuredContent as { user: { id: string | null } }).user.id).toBeNull();
    await client.close();

    expect((await accept(tokenFor(home.ownerEmail))).status).toBe(200);
    const again = await connectClient(key);
    const accepted = await again.callTool({ name: "get-account", arguments: {} });
    expect((accepted.structuredContent as { user: { id: string | null } }).user.id).toBe(userId);
    await again.close();
  });

  it("a custom model created a moment ago answers on the first request, even with the key's context cached", async () => {
    const org = await seedOrg();
    // Cache the key's context in this isolate.
    expect((await call("/v1/models", { key: org.key })).status).toBe(200);
    const fake = env.FAKE_UPSTREAM_URL as string;
    expect((await call("/v1/master/custom-providers", { method: "POST", key: org.masterKey, ...json({ name: "fresh", baseUrl: `${fake}/fresh`, token: "t" }) })).status).toBe(201);
    expect((await call("/v1/master/custom-models", { method: "POST", key: org.masterKey, ...json({ providerName: "fresh", modelId: "fresh-large" }) })).status).toBe(201);
    const res = await chat(org.key, { model: "fresh/fresh-large", messages: [{ role: "user", content: "hello" }] });
    expect(res.status, await res.clone().text()).toBe(200);
    // A model that does not exist is still refused after the fresh look.
    const missing = await chat(org.key, { model: "nobody/none", messages: [{ role: "user", content: "hello" }] });
    expect(missing.status).toBe(400);
  });

  it("deny_ip_cidrs fails closed when the client IP cannot be parsed", async () => {
    const org = await seedOrg();
    const made = await call("/v1/master/keys", {
      method: "POST",
      key: org.masterKey,
      ...json({ projectId: org.projectId, description: "deny range", iamRules: [{ ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: ["203.0.113.0/24"] } }] }),
    });
    expect(made.status).toBe(201);
    const key = ((await made.json()) as { apiKey: { token: string } }).apiKey.token;
    for (const ip of ["not-an-ip", "203.0.113.9"]) {
      const res = await call("/v1/models", { key, headers: { "cf-connecting-ip": ip } });
      expect(res.status, ip).toBe(403);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("deny_ip_cidrs");
    }
    const refused = await chat(key, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { "cf-connecting-ip": "999.1.1.1" });
    expect(refused.status).toBe(403);
    expect((await call("/v1/models", { key, headers: { "cf-connecting-ip": "198.51.100.4" } })).status).toBe(200);
  });
});
