/** Master API: members of the master key's organization (contract section 4). */
import { Hono } from "hono";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { members, ROLES, users } from "../../db/schema";
import { ApiError, notFound } from "../../errors/api-error";
import { validateBody } from "../../errors/validation";
import { addMember, sendInvitation } from "../../organizations/memberships";
import type { Env } from "../../env";

const createBody = z.object({
  email: z.email().max(320),
  name: z.string().trim().min(1).max(200),
  role: z.enum(ROLES),
  /** Only used when the e-mail has no account yet, and then it opens this organization only. */
  password: z.string().min(12, "must be at least 12 characters").max(1024).optional(),
});

/**
 * A member as its organization sees it: the name this organization gave, never the account's own
 * name or id (contract section 5: nothing here tells whether the e-mail already had an account).
 */
export interface MemberView {
  id: string;
  object: "member";
  organizationId: string;
  email: string;
  name: string;
  role: (typeof ROLES)[number];
  /** `pending` until the person accepts the e-mailed invitation (or first signs in, see docs/security.md). */
  status: "pending" | "active";
  createdAt: string;
}

const memberColumns = {
  id: members.id,
  organizationId: members.organizationId,
  role: members.role,
  name: members.name,
  acceptedAt: members.acceptedAt,
  createdAt: members.createdAt,
  email: users.email,
};

const view = (r: { id: string; organizationId: string; role: MemberView["role"]; createdAt: number; email: string; name: string | null; acceptedAt: number | null }): MemberView => ({
  id: r.id,
  object: "member",
  organizationId: r.organizationId,
  email: r.email,
  name: r.name ?? "",
  role: r.role,
  status: r.acceptedAt === null ? "pending" : "active",
  createdAt: new Date(r.createdAt).toISOString(),
});

/**
 * A member of this organization named by member id or by e-mail (contract: `{member}` is either),
 * or 404. Exported for teams and member IAM routes.
 */
export async function resolveMember(env: Env, organizationId: string, ref: string): Promise<MemberView> {
  const byEmail = ref.includes("@");
  const row = await getDb(env.DB)
    .select(memberColumns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), byEmail ? eq(users.email, ref.trim().toLowerCase()) : eq(members.id, ref)))
    .get();
  if (!row) throw notFound(`Member '${ref}' not found.`);
  return view(row);
}

export const memberRoutes = new Hono<AppEnv>();

memberRoutes.post("/", validateBody(createBody), async (c) => {
  const orgId = c.get("master").organizationId;
  const memberId = await addMember(c.env, orgId, c.req.valid("json"));
  return c.json({ member: await resolveMember(c.env, orgId, memberId) }, 201);
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

memberRoutes.get("/", async (c) => {
  const rows = await getDb(c.env.DB)
    .select(memberColumns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(eq(members.organizationId, c.get("master").organizationId))
    .orderBy(members.createdAt, members.id);
  return c.json({ members: rows.map(view) });
});

memberRoutes.get("/:member", async (c) => {
  return c.json({ member: await resolveMember(c.env, c.get("master").organizationId, c.req.param("member")) });
});
