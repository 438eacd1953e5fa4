/** Master API: members of the master key's organization (contract section 4), over src/actions/members.ts. */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { ApiError } from "../../errors/api-error";
import { validateBody } from "../../errors/validation";
import { sendInvitation } from "../../organizations/memberships";
import { changeMemberRole, inviteMember, listMembers, memberCreateBody, memberRoleBody, removeMember, resolveMember } from "../../actions/members";

export { resolveMember, type MemberView } from "../../actions/members";

export const memberRoutes = new Hono<AppEnv>();

memberRoutes.post("/", validateBody(memberCreateBody), async (c) => {
  return c.json({ member: await inviteMember(c.env, c.get("master").organizationId, c.req.valid("json")) }, 201);
});

/** Sends a fresh acceptance token to a pending member (the previous one stops working). */
memberRoutes.post("/:member/invitation", async (c) => {
  const orgId = c.get("master").organizationId;
  const member = await resolveMember(c.env, orgId, c.req.param("member"));
  if (member.status !== "pending") {
    throw new ApiError(409, "This member already accepted the membership.", { type: "invalid_request_error", code: "member_active", param: "member" });
  }
  await sendInvitation(c.env, orgId, member.id, member.email);
  return c.json({ member }, 202);
});

memberRoutes.get("/", async (c) => c.json({ members: await listMembers(c.env, c.get("master").organizationId) }));

memberRoutes.get("/:member", async (c) => {
  return c.json({ member: await resolveMember(c.env, c.get("master").organizationId, c.req.param("member")) });
});

memberRoutes.patch("/:member", validateBody(memberRoleBody), async (c) => {
  return c.json({ member: await changeMemberRole(c.env, c.get("master").organizationId, c.req.param("member"), c.req.valid("json").role) });
});

memberRoutes.delete("/:member", async (c) => {
  const member = await removeMember(c.env, c.get("master").organizationId, c.req.param("member"));
  return c.json({ message: `Member '${member.email}' removed.` });
});
