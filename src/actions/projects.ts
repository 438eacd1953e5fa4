/**
 * Creating, changing and deleting projects, shared by the master API (`/v1/master/projects`) and
 * the dashboard's session API (`/api/projects`, owners and admins).
 */
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, projects, PROJECT_MODES } from "../db/schema";
import { badRequest, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { bumpKeyVersions, syncKeys } from "../keys/sync";
import { endKeyOAuth } from "../oauth/tokens";
import { publicProject } from "../organizations/view";
import { providerPreferencesSchema, type ProviderPreferences } from "../routing/preferences";

/** At most one year of response caching. */
export const MAX_CACHE_SECONDS = 365 * 24 * 3600;
/** A timeout longer than an hour is no timeout; requests clamp to the operator's bounds anyway. */
const MAX_TIMEOUT_MS = 3_600_000;

export const projectCreateBody = z.object({
  name: z.string().trim().min(1).max(200),
  mode: z.enum(PROJECT_MODES).optional(),
  /** Off unless asked for: an identical request of another key of the project would get this one's answer. */
  cachingEnabled: z.boolean().optional(),
  cacheDurationSeconds: z.number().int().min(1).max(MAX_CACHE_SECONDS).optional(),
  /** Keep each request's body and answer in R2 beside its record (src/usage/bodies.ts). */
  logBodies: z.boolean().optional(),
  /** Upstream timeouts (ms; null: the gateway's), within the operator's bounds at request time. */
  firstByteTimeoutMs: z.number().int().min(100).max(MAX_TIMEOUT_MS).nullable().optional(),
  timeoutMs: z.number().int().min(100).max(MAX_TIMEOUT_MS).nullable().optional(),
  /** Start the next candidate when the first is late (src/routes/chat/hedge.ts). */
  hedging: z.boolean().optional(),
  /** Default routing preferences of requests that send no `provider` (null clears them). */
  provider: providerPreferencesSchema.nullable().optional(),
  /** Hybrid projects: after the organization's own keys of a provider failed, its operator key, billed to credits. */
  operatorKeyFallback: z.boolean().optional(),
});
export const projectPatchBody = projectCreateBody.partial().refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update" });
export type ProjectCreate = z.infer<typeof projectCreateBody>;
export type ProjectPatch = z.infer<typeof projectPatchBody>;

/** The API's `provider` is stored as `providerPreferences`. */
function columnsOf<T extends { provider?: ProviderPreferences | null }>(body: T): Omit<T, "provider"> & { providerPreferences?: ProviderPreferences | null } {
  const { provider, ...rest } = body;
  return provider === undefined ? rest : { ...rest, providerPreferences: provider };
}

/** A live (not deleted) project of this organization, or 404. */
export async function loadProject(env: Env, organizationId: string, id: string) {
  const row = await getDb(env.DB)
    .select()
    .from(projects)
    .where(and(eq(projects.id, id), eq(projects.organizationId, organizationId), isNull(projects.deletedAt)))
    .get();
  if (!row) throw notFound(`Project '${id}' not found.`);
  return row;
}

export async function createProject(env: Env, organizationId: string, body: ProjectCreate) {
  // The column's SQL default predates the opt-in; the insert says it (see schema.ts).
  const row = await getDb(env.DB)
    .insert(projects)
    .values({ id: newId("proj"), organizationId, ...columnsOf(body), cachingEnabled: body.cachingEnabled ?? false, createdAt: Date.now() })
    .returning()
    .get();
  return publicProject(row);
}

export async function updateProject(env: Env, organizationId: string, id: string, body: ProjectPatch) {
  const current = await loadProject(env, organizationId, id);
  if (!Object.keys(body).length) return publicProject(current);
  const row = await getDb(env.DB).update(projects).set(columnsOf(body)).where(eq(projects.id, current.id)).returning().get();
  // Mode, caching, body logging, timeouts and routing defaults are part of every key's context in this project.
  await bumpKeyVersions(env, { projectId: current.id });
  return publicProject(row ?? current);
}

/** Every live project of the organization, oldest first (the default one first of all). */
export async function listProjects(env: Env, organizationId: string) {
  const rows = await getDb(env.DB)
    .select()
    .from(projects)
    .where(and(eq(projects.organizationId, organizationId), isNull(projects.deletedAt)))
    .orderBy(projects.createdAt, projects.id);
  return rows.map(publicProject);
}

/** Deletes a project and its keys (not the default project: 400 `default_project`). */
export async function deleteProject(env: Env, organizationId: string, id: string): Promise<{ message: string; deletedKeys: number }> {
  const project = await loadProject(env, organizationId, id);
  if (project.isDefault) throw badRequest("The default project cannot be deleted.", "id", "default_project");
  const db = getDb(env.DB);
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
  await syncKeys(env, keys);
  await endKeyOAuth(env, { projectId: project.id }, now);
  return { message: `Project '${project.id}' deleted.`, deletedKeys: keys.length };
}
