/** Master API: teams and their members (contract section 4). Team rules reach keys via members. */
import { Hono } from "hono";
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { teamMembers, teams } from "../../db/schema";
import { ApiError, notFound } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { newId } from "../../lib/ids";
import { bumpKeyVersions } from "../../keys/sync";
import type { Env } from "../../env";
import { resolveMember } from "./members";

type TeamRow = typeof teams.$inferSelect;

const createBody = z.object({ name: z.string().trim().min(1).max(200) });
const addMemberBody = z.object({ member: z.string().trim().min(1).max(320) });
const idParam = z.object({ id: z.string().min(1) });

const view = (t: TeamRow, memberIds: string[]) => ({
  id: t.id,
  object: "team" as const,
  organizationId: t.organizationId,
  name: t.name,
  memberIds,
  createdAt: new Date(t.createdAt).toISOString(),
});

async function withMembers(env: Env, rows: TeamRow[]) {
  if (!rows.length) return [];
  const links = await getDb(env.DB)
    .select({ teamId: teamMembers.teamId, memberId: teamMembers.memberId })
    .from(teamMembers)
    .where(inArray(teamMembers.teamId, rows.map((t) => t.id)))
    .orderBy(teamMembers.createdAt, teamMembers.memberId);
  return rows.map((t) => view(t, links.filter((l) => l.teamId === t.id).map((l) => l.memberId)));
}

/** A team of this organization, or 404. Exported for team IAM routes. */
export async function loadTeam(env: Env, organizationId: string, id: string): Promise<TeamRow> {
  const row = await getDb(env.DB).select().from(teams).where(and(eq(teams.id, id), eq(teams.organizationId, organizationId))).get();
  if (!row) throw notFound(`Team '${id}' not found.`);
  return row;
}

export const teamRoutes = new Hono<AppEnv>();

teamRoutes.post("/", validateBody(createBody), async (c) => {
  const orgId = c.get("master").organizationId;
  const row = await getDb(c.env.DB)
    .insert(teams)
    .values({ id: newId("team"), organizationId: orgId, name: c.req.valid("json").name, createdAt: Date.now() })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!row) throw new ApiError(409, "A team with this name already exists.", { type: "invalid_request_error", code: "team_exists", param: "name" });
  return c.json({ team: view(row, []) }, 201);
});

teamRoutes.get("/", async (c) => {
  const rows = await getDb(c.env.DB).select().from(teams).where(eq(teams.organizationId, c.get("master").organizationId)).orderBy(teams.createdAt, teams.id);
  return c.json({ teams: await withMembers(c.env, rows) });
});

teamRoutes.get("/:id", validate("param", idParam), async (c) => {
  const team = await loadTeam(c.env, c.get("master").organizationId, c.req.valid("param").id);
  const [withIds] = await withMembers(c.env, [team]);
  return c.json({ team: withIds });
});

teamRoutes.post("/:id/members", validate("param", idParam), validateBody(addMemberBody), async (c) => {
  const orgId = c.get("master").organizationId;
  const team = await loadTeam(c.env, orgId, c.req.valid("param").id);
  const member = await resolveMember(c.env, orgId, c.req.valid("json").member);
  await getDb(c.env.DB).insert(teamMembers).values({ teamId: team.id, memberId: member.id, createdAt: Date.now() }).onConflictDoNothing();
  // The team's rules now apply to every key this member created.
  await bumpKeyVersions(c.env, { createdBy: [member.id] });
  const [withIds] = await withMembers(c.env, [team]);
  return c.json({ team: withIds }, 201);
});
