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
