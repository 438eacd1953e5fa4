import { eq, inArray, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys } from "../db/schema";
import { keyStateStub, snapshotOf } from "../durable-objects/key-state";

type KeyRow = typeof apiKeys.$inferSelect;

/** Pushes the key rows' current state to their KeyState DOs (awaited: admin changes are immediate). */
export async function syncKeys(env: Env, rows: KeyRow[]): Promise<void> {
  await Promise.all(rows.map((k) => keyStateStub(env, k.id).sync(snapshotOf(k))));
}

/**
 * After any admin change that affects how keys are authorized (rules, policy, custom providers,
 * provider keys, project settings): bump `version` of the affected keys and push it to their DOs,
 * so every isolate reloads its cached KeyContext on the next request.
 */
export async function bumpKeyVersions(env: Env, where: { keyIds?: string[]; createdBy?: string[]; projectId?: string; organizationId?: string }): Promise<void> {
  const db = getDb(env.DB);
  const cond =
    where.keyIds ? inArray(apiKeys.id, where.keyIds)
    : where.createdBy ? inArray(apiKeys.createdBy, where.createdBy)
    : where.projectId ? eq(apiKeys.projectId, where.projectId)
    : where.organizationId ? eq(apiKeys.organizationId, where.organizationId)
    : undefined;
  if (!cond) return;
  const rows = await db
    .update(apiKeys)
    .set({ version: sql`${apiKeys.version} + 1`, updatedAt: Date.now() })
    .where(cond)
    .returning();
  await syncKeys(env, rows);
}
