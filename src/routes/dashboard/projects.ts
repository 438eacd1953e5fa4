/**
 * Projects in the session API, the same actions as `/v1/master/projects`: list and read (members),
 * create, change (name, mode, caching, bodies, routing defaults) and delete (owners and admins).
 */
import { Hono } from "hono";
import * as z from "zod";
import type { DashboardEnv } from "./types";
import type { SessionInfo } from "../../auth/session";
import { forbidden } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { isOrgAdmin } from "./organization";
import { publicProject } from "../../organizations/view";
import { createProject, deleteProject, listProjects, loadProject, projectCreateBody, projectPatchBody, updateProject } from "../../actions/projects";

export const PROJECT_PATHS = ["/projects", "/projects/*"] as const;

const idParam = z.object({ id: z.string().min(1).max(64) });

function requireAdmin(s: SessionInfo): void {
  if (!isOrgAdmin(s)) throw forbidden("Only owners and admins create, change or delete projects.", "role_required");
}

export const dashboardProjectRoutes = new Hono<DashboardEnv>();

dashboardProjectRoutes.get("/projects", async (c) => c.json({ projects: await listProjects(c.env, c.get("session").organizationId) }));

dashboardProjectRoutes.post("/projects", validateBody(projectCreateBody), async (c) => {
  const s = c.get("session");
  requireAdmin(s);
  return c.json({ project: await createProject(c.env, s.organizationId, c.req.valid("json")) }, 201);
});

dashboardProjectRoutes.get("/projects/:id", validate("param", idParam), async (c) => {
  return c.json({ project: publicProject(await loadProject(c.env, c.get("session").organizationId, c.req.valid("param").id)) });
});

dashboardProjectRoutes.patch("/projects/:id", validate("param", idParam), validateBody(projectPatchBody), async (c) => {
  const s = c.get("session");
  requireAdmin(s);
  return c.json({ project: await updateProject(c.env, s.organizationId, c.req.valid("param").id, c.req.valid("json")) });
});

dashboardProjectRoutes.delete("/projects/:id", validate("param", idParam), async (c) => {
  const s = c.get("session");
  requireAdmin(s);
  return c.json(await deleteProject(c.env, s.organizationId, c.req.valid("param").id));
});
