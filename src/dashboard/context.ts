/**
 * What every signed-in dashboard page needs: the session (src/auth/session.ts, the same cookie as
 * the session API), the user's organizations (switcher), the organization's projects (switcher)
 * and the selected project. Pages without a session redirect to the sign-in page.
 */
import type { Context, MiddlewareHandler } from "hono";
import { and, asc, eq, isNull } from "drizzle-orm";
import { switchableMemberships } from "../organizations/memberships";
import type { Env } from "../env";
import type { AppVariables } from "../app-types";
import type { Plan } from "../db/schema";
import { getDb } from "../db/client";
import { projects } from "../db/schema";
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

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export async function loadPageContext(c: Context, session: SessionInfo): Promise<PageContext> {
  const db = getDb((c.env as Env).DB);
  // The switcher lists only what the account's current password opens (never another
  // organization's pending membership: its name and id are that organization's business).
  const [memberships, projectRows] = await Promise.all([
    switchableMemberships(db, session.userId),
    db
      .select({ id: projects.id, name: projects.name, isDefault: projects.isDefault })
      .from(projects)
      .where(and(eq(projects.organizationId, session.organizationId), isNull(projects.deletedAt)))
      .orderBy(asc(projects.createdAt), asc(projects.id)),
  ]);
  const orgs = memberships
    .map((m) => ({ id: m.organizationId, name: m.organizationName, plan: m.plan }))
    .sort((a, b) => cmp(a.name, b.name) || cmp(a.id, b.id));
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
