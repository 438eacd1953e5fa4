/**
 * Listing gateway keys, shared by `GET /v1/master/keys`, `GET /api/keys` and the dashboard's Keys
 * page: one query, one project check (another organization's project is a 404).
 */
import { and, desc, eq, ne } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, projects } from "../db/schema";
import { notFound } from "../errors/api-error";
import type { KeyRow } from "../keys/create";

export interface KeyListFilter {
  projectId?: string | undefined;
  /** Only keys this member created (developers see only their own keys). */
  createdBy?: string | undefined;
}

export async function listKeys(env: Env, organizationId: string, filter: KeyListFilter = {}): Promise<KeyRow[]> {
  const db = getDb(env.DB);
  if (filter.projectId) {
    const p = await db
      .select({ id: projects.id })
      .from(projects)
      .where(and(eq(projects.id, filter.projectId), eq(projects.organizationId, organizationId)))
      .get();
    if (!p) throw notFound(`Project '${filter.projectId}' not found`, "project_not_found");
  }
  const conds = [eq(apiKeys.organizationId, organizationId), ne(apiKeys.status, "deleted")];
  if (filter.projectId) conds.push(eq(apiKeys.projectId, filter.projectId));
  if (filter.createdBy) conds.push(eq(apiKeys.createdBy, filter.createdBy));
  return db.select().from(apiKeys).where(and(...conds)).orderBy(desc(apiKeys.createdAt), apiKeys.id);
}
