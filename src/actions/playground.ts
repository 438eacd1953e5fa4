/**
 * Which key the dashboard's playground runs as: the auto-generated playground key of the project
 * (created with the organization for its default project). Shared by the playground page and its
 * chat door (src/routes/dashboard/playground.ts).
 */
import { and, asc, desc, eq, isNull, ne } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, projects } from "../db/schema";

/** The playground key that serves `projectId`: the project's own, else the default project's (null: none). */
export async function playgroundKeyFor(env: Env, organizationId: string, projectId: string | undefined): Promise<{ id: string; projectId: string; projectName: string } | null> {
  const rows = await getDb(env.DB)
    .select({ id: apiKeys.id, projectId: apiKeys.projectId, projectName: projects.name, isDefault: projects.isDefault })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.kind, "playground"), ne(apiKeys.status, "deleted"), isNull(projects.deletedAt)))
    .orderBy(desc(projects.isDefault), asc(apiKeys.createdAt));
  const row = rows.find((r) => r.projectId === projectId) ?? rows.find((r) => r.isDefault) ?? rows[0];
  return row ? { id: row.id, projectId: row.projectId, projectName: row.projectName } : null;
}

