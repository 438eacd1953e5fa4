/**
 * Managing the organization from the dashboard (owners and admins; developers get 403 from
 * `requireManager`): the same actions as the master API (src/actions/*), with the acting member's
 * role applied to member changes (only an owner adds, changes or removes an owner).
 *
 *   POST /api/members {email, name, role}        PATCH /api/members/{member} {role}    DELETE /api/members/{member}
 *   POST /api/teams {name}                       POST /api/teams/{id}/members {member}  DELETE /api/teams/{id}/members/{member}
 *   PATCH /api/members/{member}/limits, PATCH /api/teams/{id}/limits {usageLimit?, periodUsageLimit?, ...} (spending limits)
 *   POST /api/provider-keys {provider, token, baseUrl?, label?}   PATCH /api/provider-keys/{id} {token?, baseUrl?, label?}   DELETE /api/provider-keys/{id}
 *   POST /api/custom-providers {name, baseUrl, token}                                  DELETE /api/custom-providers/{id}
 *   POST /api/custom-models {providerName, modelId, name?, ...}                        DELETE /api/custom-models/{id}
 */
import { Hono, type Context } from "hono";
import type { DashboardEnv } from "./types";
import { validateBody } from "../../errors/validation";
import { changeMemberRole, inviteMember, memberCreateBody, memberRoleBody, removeMember, type MemberActor } from "../../actions/members";
import { addTeamMember, createTeam, removeTeamMember, teamAddMemberBody, teamCreateBody } from "../../actions/teams";
import { setMemberLimits, setTeamLimits, spendLimitsBody } from "../../actions/member-limits";
import {
  createProviderKey,
  deleteProviderKey,
  PROVIDER_KEY_PATCH_HINTS,
  providerKeyCreateBody,
  providerKeyPatchBody,
  updateProviderKey,
} from "../../actions/provider-keys";
import { createCustomProvider, customProviderCreateBody, deleteCustomProvider } from "../../actions/custom-providers";
import { createCustomModel, customModelCreateBody, deleteCustomModel } from "../../actions/custom-models";

/** Paths of this sub-app, for the session + manager guard in ./index.ts. */
export const ORGANIZATION_ADMIN_PATHS = [
  "/members",
  "/members/:ref",
  "/teams",
  "/teams/:id/members",
  "/teams/:id/members/:ref",
  "/members/:ref/limits",
  "/teams/:id/limits",
  "/provider-keys",
  "/provider-keys/:id",
  "/custom-providers",
  "/custom-providers/:id",
  "/custom-models",
  "/custom-models/:id",
] as const;

const orgOf = (c: Context<DashboardEnv>) => c.get("session").organizationId;
const actorOf = (c: Context<DashboardEnv>): MemberActor => ({ memberId: c.get("session").memberId, role: c.get("session").role });

export const dashboardOrganizationAdminRoutes = new Hono<DashboardEnv>();
const r = dashboardOrganizationAdminRoutes;

r.post("/members", validateBody(memberCreateBody), async (c) => c.json({ member: await inviteMember(c.env, orgOf(c), c.req.valid("json"), actorOf(c)) }, 201));
r.patch("/members/:ref", validateBody(memberRoleBody), async (c) =>
  c.json({ member: await changeMemberRole(c.env, orgOf(c), c.req.param("ref"), c.req.valid("json").role, actorOf(c)) }),
);
r.delete("/members/:ref", async (c) => {
  const member = await removeMember(c.env, orgOf(c), c.req.param("ref"), actorOf(c));
  return c.json({ message: `Member '${member.email}' removed.` });
});

r.post("/teams", validateBody(teamCreateBody), async (c) => c.json({ team: await createTeam(c.env, orgOf(c), c.req.valid("json").name) }, 201));
r.post("/teams/:id/members", validateBody(teamAddMemberBody), async (c) =>
  c.json({ team: await addTeamMember(c.env, orgOf(c), c.req.param("id"), c.req.valid("json").member) }, 201),
);
r.delete("/teams/:id/members/:ref", async (c) => {
  const { team, member } = await removeTeamMember(c.env, orgOf(c), c.req.param("id"), c.req.param("ref"));
  return c.json({ message: `Member '${member.email}' removed from team '${team.name}'.` });
});

r.patch("/members/:ref/limits", validateBody(spendLimitsBody), async (c) =>
  c.json({ limits: await setMemberLimits(c.env, orgOf(c), c.req.param("ref"), c.req.valid("json"), actorOf(c)) }),
);
r.patch("/teams/:id/limits", validateBody(spendLimitsBody), async (c) =>
  c.json({ limits: await setTeamLimits(c.env, orgOf(c), c.req.param("id"), c.req.valid("json"), actorOf(c)) }),
);

r.post("/provider-keys", validateBody(providerKeyCreateBody), async (c) => c.json({ providerKey: await createProviderKey(c.env, orgOf(c), c.req.valid("json")) }, 201));
r.patch("/provider-keys/:id", validateBody(providerKeyPatchBody, PROVIDER_KEY_PATCH_HINTS), async (c) =>
  c.json({ providerKey: await updateProviderKey(c.env, orgOf(c), c.req.param("id"), c.req.valid("json")) }),
);
r.delete("/provider-keys/:id", async (c) => {
  await deleteProviderKey(c.env, orgOf(c), c.req.param("id"));
  return c.json({ message: `Provider key '${c.req.param("id")}' deleted.` });
});

r.post("/custom-providers", validateBody(customProviderCreateBody), async (c) =>
  c.json({ customProvider: await createCustomProvider(c.env, orgOf(c), c.req.valid("json")) }, 201),
);
r.delete("/custom-providers/:id", async (c) => {
  const name = await deleteCustomProvider(c.env, orgOf(c), c.req.param("id"));
  return c.json({ message: `Custom provider '${name}' and its models deleted.` });
});

r.post("/custom-models", validateBody(customModelCreateBody), async (c) => c.json({ customModel: await createCustomModel(c.env, orgOf(c), c.req.valid("json")) }, 201));
r.delete("/custom-models/:id", async (c) => {
  const model = await deleteCustomModel(c.env, orgOf(c), c.req.param("id"));
  return c.json({ message: `Custom model '${model}' deleted.` });
});
