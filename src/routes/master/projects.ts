/** Master API: projects of the master key's organization (contract section 4). */
import { Hono } from "hono";
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { apiKeys, projects, PROJECT_MODES } from "../../db/schema";
import { badRequest, notFound } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { newId } from "../../lib/ids";
import { bumpKeyVersions, syncKeys } from "../../keys/sync";
import { endKeyOAuth } from "../../oauth/tokens";
import { publicProject } from "../../organizations/view";
import type { Env } from "../../env";
import { providerPreferencesSchema, type ProviderPreferences } from "../../routing/preferences";

/** At most one year of response caching. */
const MAX_CACHE_SECONDS = 365 * 24 * 3600;

const createBody = z.object({
  name: z.string().trim().min(1).max(200),
  mode: z.enum(PROJECT_MODES).optional(),
  cachingEnabled: z.boolean().optional(),
  cacheDurationSeconds: z.number().int().min(1).max(MAX_CACHE_SECONDS).optional(),
  /** Default routing preferences of requests that send no `provider` (null clears them). */
  provider: providerPreferencesSchema.nullable().optional(),
});
const patchBody = createBody.partial().refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update" });

/** The API's `provider` is stored as `providerPreferences`. */
function columnsOf<T extends { provider?: ProviderPreferences | null }>(body: T): Omit<T, "provider"> & { providerPreferences?: ProviderPreferences | null } {
  const { provider, ...rest } = body;
  return provider === undefined ? rest : { ...rest, providerPreferences: provider };
}
const idParam = z.object({ id: z.string().min(1) });

/** A live (not deleted) project of this organization, or 404. */
async function loadProject(env: Env, organizationId: string, id: string) {
  const row = await getDb(env.DB)
    .select()
    .from(projects)
    .where(and(eq(projects.id, id), eq(projects.organizationId, organizationId), isNull(projects.deletedAt)))
    .get();
  if (!row) throw notFound(`Project '${id}' not found.`);
  return row;
}

export const projectRoutes = new Hono<AppEnv>();

projectRoutes.post("/", validateBody(createBody), async (c) => {
  const body = c.req.valid("json");
  const row = await getDb(c.env.DB)
    .insert(projects)
    .values({ id: newId("proj"), organizationId: c.get("master").organizationId, ...columnsOf(body), createdAt: Date.now() })
    .returning()
    .get();
  return c.json({ project: publicProject(row) }, 201);
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

projectRoutes.patch("/:id", validate("param", idParam), validateBody(patchBody), async (c) => {
  const orgId = c.get("master").organizationId;
  const current = await loadProject(c.env, orgId, c.req.valid("param").id);
  const body = c.req.valid("json");
  if (!Object.keys(body).length) return c.json({ project: publicProject(current) });
  const row = await getDb(c.env.DB).update(projects).set(columnsOf(body)).where(eq(projects.id, current.id)).returning().get();
  // Mode, caching and default routing preferences are part of every key's context in this project.
  await bumpKeyVersions(c.env, { projectId: current.id });
  return c.json({ project: publicProject(row ?? current) });
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
