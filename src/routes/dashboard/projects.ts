/** `PATCH /api/projects/{id}` (owners and admins): the same action as `PATCH /v1/master/projects/{id}`. */
import { Hono } from "hono";
import * as z from "zod";
import type { DashboardEnv } from "./types";
import { forbidden } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { isOrgAdmin } from "./organization";
import { projectPatchBody, updateProject } from "../../actions/projects";

export const PROJECT_PATHS = ["/projects/*"] as const;

export const dashboardProjectRoutes = new Hono<DashboardEnv>();

dashboardProjectRoutes.patch("/projects/:id", validate("param", z.object({ id: z.string().min(1).max(64) })), validateBody(projectPatchBody), async (c) => {
  const s = c.get("session");
  if (!isOrgAdmin(s)) throw forbidden("Only owners and admins change project settings.", "role_required");
  return c.json({ project: await updateProject(c.env, s.organizationId, c.req.valid("param").id, c.req.valid("json")) });
});
