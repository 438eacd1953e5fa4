import { eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Env } from "../env";
import { getDb, type Db } from "../db/client";
import { apiKeys, teamMembers } from "../db/schema";
import { keyStateStub, snapshotOf } from "../durable-objects/key-state";

type KeyRow = typeof apiKeys.$inferSelect;

/** Pushes the key rows' current state to their KeyState DOs (awaited: admin changes are immediate). */
export async function syncKeys(env: Env, rows: KeyRow[]): Promise<void> {
  await Promise.all(rows.map((k) => keyStateStub(env, k.id).sync(snapshotOf(k))));
}

/**
 * Which keys an admin change affects: one key, the keys one member created, the keys the members
 * of one team created, or every key of a project or organization. Each is a condition with a fixed
 * number of bound values, never a list of ids: D1 binds at most 100 parameters per statement
 * (src/db/client.ts), and a team can have more members.
 */
export type AffectedKeys = { keyId: string } | { createdBy: string } | { teamId: string } | { projectId: string } | { organizationId: string };

function affectedKeys(db: Db, where: AffectedKeys): SQL {
  if ("keyId" in where) return eq(apiKeys.id, where.keyId);
  if ("createdBy" in where) return eq(apiKeys.createdBy, where.createdBy);
  if ("teamId" in where) return inArray(apiKeys.createdBy, db.select({ id: teamMembers.memberId }).from(teamMembers).where(eq(teamMembers.teamId, where.teamId)));
  if ("projectId" in where) return eq(apiKeys.projectId, where.projectId);
  return eq(apiKeys.organizationId, where.organizationId);
}

/**
 * After any admin change that affects how keys are authorized (rules, policy, custom providers,
 * provider keys, project settings): bump `version` of the affected keys and push it to their DOs,
 * so every isolate reloads its cached KeyContext on the next request.
 */
export async function bumpKeyVersions(env: Env, where: AffectedKeys): Promise<void> {
  const db = getDb(env.DB);
  const rows = await db
    .update(apiKeys)
    .set({ version: sql`${apiKeys.version} + 1`, updatedAt: Date.now() })
    .where(affectedKeys(db, where))
    .returning();
  await syncKeys(env, rows);
}
