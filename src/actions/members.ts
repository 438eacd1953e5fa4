/**
 * Members of an organization: invite, list, change role, remove. One implementation for the master
 * API (`/v1/master/members`, the organization itself acting) and the session API (`/api/members`,
 * a signed-in owner or admin acting). With an acting member (`actor`), spec 5 rule 6 applies in its
 * spirit: only an owner may make someone an owner or change or remove an owner. Whoever acts, an
 * organization keeps at least one owner.
 */
import { and, count, eq } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import type { Role } from "../db/schema";
import { getDb } from "../db/client";
import { apiKeys, members, platformKeys, ROLES, users } from "../db/schema";
import { ApiError, forbidden, notFound } from "../errors/api-error";
import { addMember } from "../organizations/memberships";
import { bumpKeyVersions } from "../keys/sync";

export const memberCreateBody = z.object({
  email: z.email().max(320),
  name: z.string().trim().min(1).max(200),
  role: z.enum(ROLES),
  /** Only used when the e-mail has no account yet, and then it opens this organization only. */
  password: z.string().min(12, "must be at least 12 characters").max(1024).optional(),
});
export const memberRoleBody = z.object({ role: z.enum(ROLES) });

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
  role: Role;
  /** `pending` until the person accepts the e-mailed invitation (only its token accepts, docs/security.md). */
  status: "pending" | "active";
  createdAt: string;
}

/** Who acts through the session API; absent for the master API (the organization itself). */
export interface MemberActor {
  memberId: string;
  role: Role;
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

const view = (r: { id: string; organizationId: string; role: Role; createdAt: number; email: string; name: string | null; acceptedAt: number | null }): MemberView => ({
  id: r.id,
  object: "member",
  organizationId: r.organizationId,
  email: r.email,
  name: r.name ?? "",
  role: r.role,
  status: r.acceptedAt === null ? "pending" : "active",
  createdAt: new Date(r.createdAt).toISOString(),
});

/** A member of this organization named by member id or by e-mail (contract: `{member}` is either), or 404. */
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

export async function listMembers(env: Env, organizationId: string): Promise<MemberView[]> {
  const rows = await getDb(env.DB)
    .select(memberColumns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(eq(members.organizationId, organizationId))
    .orderBy(members.createdAt, members.id);
  return rows.map(view);
}

const ownerOnly = (what: string) => forbidden(`Only an owner can ${what}.`, "owner_required");

/** Adds a pending member and e-mails the acceptance token (src/organizations/memberships.ts). */
export async function inviteMember(env: Env, organizationId: string, body: z.infer<typeof memberCreateBody>, actor?: MemberActor): Promise<MemberView> {
  if (actor && actor.role !== "owner" && body.role === "owner") throw ownerOnly("add an owner");
  return resolveMember(env, organizationId, await addMember(env, organizationId, body));
}

async function assertNotLastOwner(env: Env, organizationId: string, target: MemberView): Promise<void> {
  if (target.role !== "owner") return;
  const owners = await getDb(env.DB)
    .select({ n: count() })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.role, "owner")))
    .get();
  if ((owners?.n ?? 0) <= 1) {
    throw new ApiError(409, "An organization needs at least one owner: make someone else an owner first.", { type: "invalid_request_error", code: "last_owner", param: "member" });
  }
}

export async function changeMemberRole(env: Env, organizationId: string, ref: string, role: Role, actor?: MemberActor): Promise<MemberView> {
  const target = await resolveMember(env, organizationId, ref);
  if (actor && actor.role !== "owner" && (target.role === "owner" || role === "owner")) throw ownerOnly("change an owner's role or make someone an owner");
  if (target.role === role) return target;
  if (role !== "owner") await assertNotLastOwner(env, organizationId, target);
  await getDb(env.DB).update(members).set({ role }).where(eq(members.id, target.id));
  // Sessions read the role from this row; cached key contexts of this member's keys are refreshed.
  await bumpKeyVersions(env, { createdBy: target.id });
  return { ...target, role };
}

/**
 * Removes a member (their sessions, team links and invitation go with the row). A member who
 * created API keys is kept: keys keep their creator, whose member and team rules apply to them.
 */
export async function removeMember(env: Env, organizationId: string, ref: string, actor?: MemberActor): Promise<MemberView> {
  const target = await resolveMember(env, organizationId, ref);
  if (actor && actor.role !== "owner" && target.role === "owner") throw ownerOnly("remove an owner");
  await assertNotLastOwner(env, organizationId, target);
  const db = getDb(env.DB);
  const keys = await db.select({ n: count() }).from(apiKeys).where(eq(apiKeys.createdBy, target.id)).get();
  // Platform secret keys act for their member too (src/platform/platform-keys.ts).
  const platform = await db.select({ n: count() }).from(platformKeys).where(eq(platformKeys.createdBy, target.id)).get();
  if ((keys?.n ?? 0) + (platform?.n ?? 0) > 0) {
    throw new ApiError(409, "This member created API keys, which keep their creator; change the member's role instead of removing them.", {
      type: "invalid_request_error",
      code: "member_has_keys",
      param: "member",
    });
  }
  await db.delete(members).where(and(eq(members.id, target.id), eq(members.organizationId, organizationId)));
  return target;
}
