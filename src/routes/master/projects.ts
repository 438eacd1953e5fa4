/** Master API: projects of the master key's organization (contract section 4). */
import { Hono } from "hono";
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { apiKeys, projects } from "../../db/schema";
import { badRequest } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { syncKeys } from "../../keys/sync";
import { endKeyOAuth } from "../../oauth/tokens";
import { publicProject } from "../../organizations/view";
import { createProject, loadProject, projectCreateBody, projectPatchBody, updateProject } from "../../actions/projects";

const idParam = z.object({ id: z.string().min(1) });

export const projectRoutes = new Hono<AppEnv>();

projectRoutes.post("/", validateBody(projectCreateBody), async (c) => {
  return c.json({ project: await createProject(c.env, c.get("master").organizationId, c.req.valid("json")) }, 201);
});

projectRoutes.get("/", async (c) => {
  const rows = await getDb(c.env.DB)
    .select()
    .from(projects)
    .where(and(eq(projects.organizationId, c.get("master").organizationId), isNull(projects.deletedAt)))
    .orderBy(projects.createdAt, projects.id);
  return c.json({ projects: rows.map(publicProject) });
});

projectRoutes.get("/:id", validate("param", idParam), async (c) => {
  const row = await loadProject(c.env, c.get("master").organizationId, c.req.valid("param").id);
  return c.json({ project: publicProject(row) });
});

projectRoutes.patch("/:id", validate("param", idParam), validateBody(projectPatchBody), async (c) => {
  return c.json({ project: await updateProject(c.env, c.get("master").organizationId, c.req.valid("param").id, c.req.valid("json")) });
});

projectRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const orgId = c.get("master").organizationId;
  const project = await loadProject(c.env, orgId, c.req.valid("param").id);
  if (project.isDefault) throw badRequest("The default project cannot be deleted.", "id", "default_project");
  const db = getDb(c.env.DB);
  const now = Date.now();
  // One transaction: the project and its keys are deleted together, then the keys' DOs learn it.
  const [, keys] = await db.batch([
    db.update(projects).set({ deletedAt: now }).where(eq(projects.id, project.id)),
    db
      .update(apiKeys)
      .set({ status: "deleted", deletedAt: now, updatedAt: now, version: sql`${apiKeys.version} + 1` })
      .where(and(eq(apiKeys.projectId, project.id), ne(apiKeys.status, "deleted")))
      .returning(),
  ]);
  await syncKeys(c.env, keys);
  await endKeyOAuth(c.env, { projectId: project.id }, now);
  return c.json({ message: `Project '${project.id}' deleted.`, deletedKeys: keys.length });
});
