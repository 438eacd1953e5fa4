import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { call, json, seedOrg } from "../../../test/helpers/fixtures";
import { checkKey, resolveGatewayKey } from "../../auth/gateway-key";
import { getDb } from "../../db/client";
import { apiKeys } from "../../db/schema";

interface TeamBody {
  team: { id: string; name: string; memberIds: string[] };
}

describe("master API: teams", () => {
  it("creates teams, refuses duplicate names, adds members by id or e-mail", async () => {
    const org = await seedOrg();
    const res = await call("/v1/master/teams", { method: "POST", key: org.masterKey, ...json({ name: "Platform" }) });
    expect(res.status).toBe(201);
    const { team } = (await res.json()) as TeamBody;
    expect(team).toMatchObject({ name: "Platform", memberIds: [] });
    expect((await call("/v1/master/teams", { method: "POST", key: org.masterKey, ...json({ name: "Platform" }) })).status).toBe(409);

    const mem = await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email: "teammate@example.test", name: "T", role: "developer" }) });
    const memberId = ((await mem.json()) as { member: { id: string } }).member.id;

    const before = await getDb(env.DB).select({ version: apiKeys.version }).from(apiKeys).where(eq(apiKeys.id, org.keyId)).get();
    const warm = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(warm.member.teamIds).toEqual([]);

    const byEmail = await call(`/v1/master/teams/${team.id}/members`, { method: "POST", key: org.masterKey, ...json({ member: org.ownerEmail }) });
    expect(byEmail.status).toBe(201);
    expect(((await byEmail.json()) as TeamBody).team.memberIds).toEqual([org.ownerMemberId]);
    const byId = await call(`/v1/master/teams/${team.id}/members`, { method: "POST", key: org.masterKey, ...json({ member: memberId }) });
    expect(((await byId.json()) as TeamBody).team.memberIds.sort()).toEqual([org.ownerMemberId, memberId].sort());

    // The owner's keys were bumped: a warm context now sees the team.
    const after = await getDb(env.DB).select({ version: apiKeys.version }).from(apiKeys).where(eq(apiKeys.id, org.keyId)).get();
    expect(after!.version).toBeGreaterThan(before!.version);
    const fresh = await checkKey(env, await resolveGatewayKey(env, org.key));
    expect(fresh.member.teamIds).toEqual([team.id]);

    const list = (await (await call("/v1/master/teams", { key: org.masterKey })).json()) as { teams: Array<{ id: string; memberIds: string[] }> };
    expect(list.teams).toHaveLength(1);
    expect(list.teams[0]!.memberIds).toHaveLength(2);
  });

  it("404s for other organizations' teams and members, 400 for bad bodies", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const { team } = (await (await call("/v1/master/teams", { method: "POST", key: other.masterKey, ...json({ name: "Theirs" }) })).json()) as TeamBody;
    expect((await call(`/v1/master/teams/${team.id}/members`, { method: "POST", key: org.masterKey, ...json({ member: org.ownerMemberId }) })).status).toBe(404);
    expect((await call(`/v1/master/teams/${team.id}/members`, { method: "POST", key: other.masterKey, ...json({ member: org.ownerMemberId }) })).status).toBe(404);
    const bad = await call("/v1/master/teams", { method: "POST", key: org.masterKey, ...json({ name: "" }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("name");
  });
});

const chatMini = (key: string) =>
  call("/v1/chat/completions", { method: "POST", key, headers: { "content-type": "application/json", "x-no-cache": "true" }, body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 3, messages: [{ role: "user", content: "hi" }] }) });

describe("master API: removing a team member (DELETE /v1/master/teams/{id}/members/{member})", () => {
  it("team rules stop applying to the member's keys on their very next request", async () => {
    const org = await seedOrg();
    const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const dev = ((await (await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: "Dev", role: "developer" }) })).json()) as { member: { id: string } }).member;
    const made = await call("/v1/master/keys", { method: "POST", key: org.masterKey, ...json({ projectId: org.projectId, description: "dev key", memberId: dev.id }) });
    const token = ((await made.json()) as { apiKey: { token: string } }).apiKey.token;
    const { team } = (await (await call("/v1/master/teams", { method: "POST", key: org.masterKey, ...json({ name: "Restricted" }) })).json()) as TeamBody;
    expect((await call(`/v1/master/teams/${team.id}/members`, { method: "POST", key: org.masterKey, ...json({ member: dev.id }) })).status).toBe(201);
    expect((await call(`/v1/master/teams/${team.id}/members`, { method: "POST", key: org.masterKey, ...json({ member: org.ownerMemberId }) })).status).toBe(201);
    expect((await call(`/v1/master/teams/${team.id}/iam`, { method: "POST", key: org.masterKey, ...json({ ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } }) })).status).toBe(201);

    // The key's context is warm in this isolate, with the team rule in it.
    const denied = await chatMini(token);
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: { message: string } }).error.message).toContain("inherited from an organization team IAM rule");

    const res = await call(`/v1/master/teams/${team.id}/members/${encodeURIComponent(email)}`, { method: "DELETE", key: org.masterKey });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { message: string }).message).toBe(`Member '${email}' removed from team 'Restricted'.`);
    expect((await chatMini(token)).status).toBe(200);

    const after = (await (await call(`/v1/master/teams/${team.id}`, { key: org.masterKey })).json()) as TeamBody;
    expect(after.team.memberIds).toEqual([org.ownerMemberId]);
    // By member id as well; the owner is not a developer, so nothing changes for their key.
    expect((await call(`/v1/master/teams/${team.id}/members/${org.ownerMemberId}`, { method: "DELETE", key: org.masterKey })).status).toBe(200);
    expect(((await (await call(`/v1/master/teams/${team.id}`, { key: org.masterKey })).json()) as TeamBody).team.memberIds).toEqual([]);
  });

  it("404 when the member is not in the team, unknown, or of another organization, and for other organizations' teams", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    const { team } = (await (await call("/v1/master/teams", { method: "POST", key: org.masterKey, ...json({ name: "Mine" }) })).json()) as TeamBody;
    const notIn = await call(`/v1/master/teams/${team.id}/members/${org.ownerMemberId}`, { method: "DELETE", key: org.masterKey });
    expect(notIn.status).toBe(404);
    expect(((await notIn.json()) as { error: { code: string } }).error.code).toBe("not_team_member");
    expect((await call(`/v1/master/teams/${team.id}/members/mem_missing`, { method: "DELETE", key: org.masterKey })).status).toBe(404);
    expect((await call(`/v1/master/teams/${team.id}/members/${encodeURIComponent(other.ownerEmail)}`, { method: "DELETE", key: org.masterKey })).status).toBe(404);

    const theirs = (await (await call("/v1/master/teams", { method: "POST", key: other.masterKey, ...json({ name: "Theirs" }) })).json()) as TeamBody;
    await call(`/v1/master/teams/${theirs.team.id}/members`, { method: "POST", key: other.masterKey, ...json({ member: other.ownerMemberId }) });
    expect((await call(`/v1/master/teams/${theirs.team.id}/members/${other.ownerMemberId}`, { method: "DELETE", key: org.masterKey })).status).toBe(404);
    expect(((await (await call(`/v1/master/teams/${theirs.team.id}`, { key: other.masterKey })).json()) as TeamBody).team.memberIds).toEqual([other.ownerMemberId]);
  });
});
