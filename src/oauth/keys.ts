/** Gateway keys an OAuth grant may act as. */
import { and, asc, eq, gt, isNull, or } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, projects } from "../db/schema";
import type { SessionInfo } from "../auth/session";

export interface SelectableKey {
  id: string;
  description: string;
  prefixHint: string;
  kind: string;
  projectId: string;
  projectName: string;
}

const liveKey = (now: number) =>
  and(eq(apiKeys.status, "active"), isNull(apiKeys.deletedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)), isNull(projects.deletedAt));

/** Owners and admins: every active key of the organization; developers: the keys they created. */
export async function selectableKeys(env: Env, session: SessionInfo, now = Date.now()): Promise<SelectableKey[]> {
  const scope = session.role === "developer" ? eq(apiKeys.createdBy, session.memberId) : undefined;
  return getDb(env.DB)
    .select({
      id: apiKeys.id,
      description: apiKeys.description,
      prefixHint: apiKeys.prefixHint,
      kind: apiKeys.kind,
      projectId: apiKeys.projectId,
      projectName: projects.name,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(and(eq(apiKeys.organizationId, session.organizationId), liveKey(now), scope))
    .orderBy(asc(projects.name), asc(apiKeys.createdAt))
    .limit(500);
}

/** Whether the key still exists, is active and unexpired (checked when tokens are issued). */
export async function isKeyLive(env: Env, keyId: string, now = Date.now()): Promise<boolean> {
  const row = await getDb(env.DB)
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(and(eq(apiKeys.id, keyId), liveKey(now)))
    .get();
  return row !== undefined;
}
