/** Master API: projects of the master key's organization (contract section 4). */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import { publicProject } from "../../organizations/view";
import { createProject, deleteProject, listProjects, loadProject, projectCreateBody, projectPatchBody, updateProject } from "../../actions/projects";

const idParam = z.object({ id: z.string().min(1) });

export const projectRoutes = new Hono<AppEnv>();

projectRoutes.post("/", validateBody(projectCreateBody), async (c) => {
  return c.json({ project: await createProject(c.env, c.get("master").organizationId, c.req.valid("json")) }, 201);
});

projectRoutes.get("/", async (c) => c.json({ projects: await listProjects(c.env, c.get("master").organizationId) }));

projectRoutes.get("/:id", validate("param", idParam), async (c) => {
  const row = await loadProject(c.env, c.get("master").organizationId, c.req.valid("param").id);
  return c.json({ project: publicProject(row) });
});

projectRoutes.patch("/:id", validate("param", idParam), validateBody(projectPatchBody), async (c) => {
  return c.json({ project: await updateProject(c.env, c.get("master").organizationId, c.req.valid("param").id, c.req.valid("json")) });
});

projectRoutes.delete("/:id", validate("param", idParam), async (c) => c.json(await deleteProject(c.env, c.get("master").organizationId, c.req.valid("param").id)));
