/** Master API: members of the master key's organization (contract section 4). */
import { Hono } from "hono";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { members, ROLES, users } from "../../db/schema";
import { ApiError, notFound } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { newId } from "../../lib/ids";
import { hashPassword } from "../../auth/password";
import type { Env } from "../../env";

const createBody = z.object({
  email: z.email().max(320),
  name: z.string().trim().min(1).max(200),
  role: z.enum(ROLES),
  password: z.string().min(12, "must be at least 12 characters").max(1024).optional(),
});

export interface MemberView {
  id: string;
  object: "member";
  organizationId: string;
  userId: string;
  email: string;
  name: string;
  role: (typeof ROLES)[number];
  createdAt: string;
}

const memberColumns = {
  id: members.id,
  organizationId: members.organizationId,
  userId: members.userId,
  role: members.role,
  createdAt: members.createdAt,
  email: users.email,
  name: users.name,
};

const view = (r: { id: string; organizationId: string; userId: string; role: MemberView["role"]; createdAt: number; email: string; name: string }): MemberView => ({
  id: r.id,
  object: "member",
  organizationId: r.organizationId,
  userId: r.userId,
  email: r.email,
  name: r.name,
  role: r.role,
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
  const body = c.req.valid("json");
  const orgId = c.get("master").organizationId;
  const db = getDb(c.env.DB);
  const email = body.email.trim().toLowerCase();

  // One user per e-mail across organizations: reuse it. Its password is only set when it has none.
  let user = await db.select({ id: users.id, passwordHash: users.passwordHash }).from(users).where(eq(users.email, email)).get();
  if (!user) {
    const passwordHash = body.password ? await hashPassword(body.password) : null;
    user = await db
      .insert(users)
      .values({ id: newId("user"), email, name: body.name, passwordHash })
      .onConflictDoNothing()
      .returning({ id: users.id, passwordHash: users.passwordHash })
      .get();
    user ??= await db.select({ id: users.id, passwordHash: users.passwordHash }).from(users).where(eq(users.email, email)).get();
    if (!user) throw new Error("user insert returned no row");
  } else if (!user.passwordHash && body.password) {
    await db.update(users).set({ passwordHash: await hashPassword(body.password) }).where(eq(users.id, user.id));
  }

  const inserted = await db
    .insert(members)
    .values({ id: newId("mem"), organizationId: orgId, userId: user.id, role: body.role, createdAt: Date.now() })
    .onConflictDoNothing()
    .returning({ id: members.id })
    .get();
  if (!inserted) {
    throw new ApiError(409, `'${email}' is already a member of this organization.`, { type: "invalid_request_error", code: "member_exists", param: "email" });
  }
  return c.json({ member: await resolveMember(c.env, orgId, inserted.id) }, 201);
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
