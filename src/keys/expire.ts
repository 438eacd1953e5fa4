/**
 * Cron job (every minute): keys past their TTL are marked inactive and their DOs synced
 * (spec section 3, "TTL passes -> expired (marked inactive by a background job)"). Requests are
 * already refused at the exact expiry instant by the DO and the auth middleware, which compare
 * `expiresAt` with the clock; this job makes the state visible and durable.
 */
import { and, eq, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys } from "../db/schema";
import { syncKeys } from "./sync";

/** Keys handled per run; the next minute picks up the rest. */
const BATCH = 500;

export async function expireKeys(env: Env, now: number): Promise<number> {
  const db = getDb(env.DB);
  const due = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.status, "active"), isNotNull(apiKeys.expiresAt), lte(apiKeys.expiresAt, now)))
    .limit(BATCH);
  if (due.length === 0) return 0;
  const rows = await db
    .update(apiKeys)
    .set({ status: "inactive", version: sql`${apiKeys.version} + 1`, updatedAt: now })
    .where(and(inArray(apiKeys.id, due.map((r) => r.id)), eq(apiKeys.status, "active"), lte(apiKeys.expiresAt, now)))
    .returning();
  await syncKeys(env, rows);
  return rows.length;
}

/** ScheduledJob adapter (src/scheduled.ts). */
export const expireKeysJob = async (env: Env, now: number): Promise<void> => {
  await expireKeys(env, now);
};
