/** Master API: teams and their members (contract section 4), over src/actions/teams.ts. */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import { addTeamMember, createTeam, getTeam, listTeams, removeTeamMember, teamAddMemberBody, teamCreateBody } from "../../actions/teams";

const idParam = z.object({ id: z.string().min(1) });
/** `{member}` is a member id or an e-mail, as in the add-member body and `/v1/master/members/{member}`. */
const memberParam = idParam.extend({ member: z.string().min(1) });

export const teamRoutes = new Hono<AppEnv>();

teamRoutes.post("/", validateBody(teamCreateBody), async (c) => {
  return c.json({ team: await createTeam(c.env, c.get("master").organizationId, c.req.valid("json").name) }, 201);
});

teamRoutes.get("/", async (c) => c.json({ teams: await listTeams(c.env, c.get("master").organizationId) }));

teamRoutes.get("/:id", validate("param", idParam), async (c) => {
  return c.json({ team: await getTeam(c.env, c.get("master").organizationId, c.req.valid("param").id) });
});

teamRoutes.post("/:id/members", validate("param", idParam), validateBody(teamAddMemberBody), async (c) => {
  const orgId = c.get("master").organizationId;
  return c.json({ team: await addTeamMember(c.env, orgId, c.req.valid("param").id, c.req.valid("json").member) }, 201);
});

teamRoutes.delete("/:id/members/:member", validate("param", memberParam), async (c) => {
  const { id, member: ref } = c.req.valid("param");
  const { team, member } = await removeTeamMember(c.env, c.get("master").organizationId, id, ref);
  return c.json({ message: `Member '${member.email}' removed from team '${team.name}'.` });
});
