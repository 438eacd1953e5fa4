/**
 * Teams and their members, shared by the master API (`/v1/master/teams`) and the session API
 * (`/api/teams`). Team rules reach keys through the members who created them.
 */
import { and, eq } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { teamMembers, teams } from "../db/schema";
import { ApiError, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { bumpKeyVersions } from "../keys/sync";
import { resolveMember } from "./members";
import { syncMemberBudget } from "../members/budget";

type TeamRow = typeof teams.$inferSelect;

export const teamCreateBody = z.object({ name: z.string().trim().min(1).max(200) });
export const teamAddMemberBody = z.object({ member: z.string().trim().min(1).max(320) });

const view = (t: TeamRow, memberIds: string[]) => ({
  id: t.id,
  object: "team" as const,
  organizationId: t.organizationId,
  name: t.name,
  memberIds,
  createdAt: new Date(t.createdAt).toISOString(),
});

/**
 * The teams with their member ids. `links` selects the team_members rows of exactly these teams
 * (one team's id, or the organization's teams through a join), never a list of their ids: D1
 * binds at most 100 parameters per statement (src/db/client.ts) and an organization can have more
 * teams.
 */
async function withMembers(env: Env, rows: TeamRow[], links: { teamId: string } | { organizationId: string }) {
  if (!rows.length) return [];
  const db = getDb(env.DB);
  const cols = { teamId: teamMembers.teamId, memberId: teamMembers.memberId };
  const order = [teamMembers.createdAt, teamMembers.memberId] as const;
  const found =
    "teamId" in links
      ? await db.select(cols).from(teamMembers).where(eq(teamMembers.teamId, links.teamId)).orderBy(...order)
      : await db
          .select(cols)
          .from(teamMembers)
          .innerJoin(teams, eq(teams.id, teamMembers.teamId))
          .where(eq(teams.organizationId, links.organizationId))
          .orderBy(...order);
  return rows.map((t) => view(t, found.filter((l) => l.teamId === t.id).map((l) => l.memberId)));
}

/** A team of this organization, or 404. */
export async function loadTeam(env: Env, organizationId: string, id: string): Promise<TeamRow> {
  const row = await getDb(env.DB).select().from(teams).where(and(eq(teams.id, id), eq(teams.organizationId, organizationId))).get();
  if (!row) throw notFound(`Team '${id}' not found.`);
  return row;
}

export async function createTeam(env: Env, organizationId: string, name: string) {
  const row = await getDb(env.DB)
    .insert(teams)
    .values({ id: newId("team"), organizationId, name, createdAt: Date.now() })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!row) throw new ApiError(409, "A team with this name already exists.", { type: "invalid_request_error", code: "team_exists", param: "name" });
  return view(row, []);
}

export async function listTeams(env: Env, organizationId: string) {
  const rows = await getDb(env.DB).select().from(teams).where(eq(teams.organizationId, organizationId)).orderBy(teams.createdAt, teams.id);
  return withMembers(env, rows, { organizationId });
}

export async function getTeam(env: Env, organizationId: string, id: string) {
  const row = await loadTeam(env, organizationId, id);
  const [team] = await withMembers(env, [row], { teamId: row.id });
  return team;
}

export async function addTeamMember(env: Env, organizationId: string, teamId: string, memberRef: string) {
  const team = await loadTeam(env, organizationId, teamId);
  const member = await resolveMember(env, organizationId, memberRef);
  await getDb(env.DB).insert(teamMembers).values({ teamId: team.id, memberId: member.id, createdAt: Date.now() }).onConflictDoNothing();
  // The team's rules and spending limits now apply to every key this member created.
  await syncMemberBudget(env, organizationId, member.id);
  await bumpKeyVersions(env, { createdBy: member.id });
  const [withIds] = await withMembers(env, [team], { teamId: team.id });
  return withIds;
}

/**
 * Takes a member (id or e-mail, as when adding) out of a team; 404 when they are not in it. Their
 * keys are bumped, so the team's rules stop applying from the next request on.
 */
export async function removeTeamMember(env: Env, organizationId: string, teamId: string, memberRef: string) {
  const team = await loadTeam(env, organizationId, teamId);
  const member = await resolveMember(env, organizationId, memberRef);
  const removed = await getDb(env.DB)
    .delete(teamMembers)
    .where(and(eq(teamMembers.teamId, team.id), eq(teamMembers.memberId, member.id)))
    .returning({ memberId: teamMembers.memberId })
    .get();
  if (!removed) throw notFound(`Member '${memberRef}' is not in team '${team.name}'.`, "not_team_member");
  await syncMemberBudget(env, organizationId, member.id);
  await bumpKeyVersions(env, { createdBy: member.id });
  return { team, member };
}
