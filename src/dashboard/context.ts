/**
 * What every signed-in dashboard page needs: the session (src/auth/session.ts, the same cookie as
 * the session API), the user's organizations (switcher), the organization's projects (switcher)
 * and the selected project. Pages without a session redirect to the sign-in page.
 */
import type { Context, MiddlewareHandler } from "hono";
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Env } from "../env";
import type { AppVariables } from "../app-types";
import type { Plan } from "../db/schema";
import { getDb } from "../db/client";
import { members, organizations, projects } from "../db/schema";
import { readSession, type SessionInfo } from "../auth/session";

export interface PageContext {
  session: SessionInfo;
  organization: { id: string; name: string; plan: Plan };
  organizations: Array<{ id: string; name: string }>;
  projects: Array<{ id: string; name: string; isDefault: boolean }>;
  project: { id: string; name: string } | null;
  path: string;
}

export interface PageEnv {
  Bindings: Env;
  Variables: AppVariables & { page: PageContext };
}

export const isAdmin = (s: SessionInfo): boolean => s.role === "owner" || s.role === "admin";

export async function loadPageContext(c: Context, session: SessionInfo): Promise<PageContext> {
  const db = getDb((c.env as Env).DB);
  const [orgs, projectRows] = await Promise.all([
    db
      .select({ id: organizations.id, name: organizations.name, plan: organizations.plan })
      .from(members)
      .innerJoin(organizations, eq(organizations.id, members.organizationId))
      .where(eq(members.userId, session.userId))
      .orderBy(asc(organizations.name), asc(organizations.id)),
    db
      .select({ id: projects.id, name: projects.name, isDefault: projects.isDefault })
      .from(projects)
      .where(and(eq(projects.organizationId, session.organizationId), isNull(projects.deletedAt)))
      .orderBy(asc(projects.createdAt), asc(projects.id)),
  ]);
  const current = orgs.find((o) => o.id === session.organizationId) ?? { id: session.organizationId, name: session.organizationId, plan: "free" as const };
  const wanted = c.req.query("project");
  const project = projectRows.find((p) => p.id === wanted) ?? projectRows.find((p) => p.isDefault) ?? projectRows[0] ?? null;
  return {
    session,
    organization: current,
    organizations: orgs.map(({ id, name }) => ({ id, name })),
    projects: projectRows,
    project: project ? { id: project.id, name: project.name } : null,
    path: c.req.path,
  };
}

/** Signed-in pages: the page context, or a redirect to the sign-in page. */
export const requirePage: MiddlewareHandler<PageEnv> = async (c, next) => {
  const session = await readSession(c.env, c.req.header("cookie"));
  if (!session) return c.redirect("/dashboard/sign-in", 302);
  c.set("page", await loadPageContext(c, session));
  c.header("cache-control", "no-store");
  await next();
};
