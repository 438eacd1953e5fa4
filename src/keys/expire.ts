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
  const isDue = and(eq(apiKeys.status, "active"), isNotNull(apiKeys.expiresAt), lte(apiKeys.expiresAt, now));
  // One statement: the due keys are picked by a subquery, not bound one by one (D1 binds at most
  // 100 parameters per statement, src/db/client.ts, and up to BATCH keys can be due at once).
  const rows = await db
    .update(apiKeys)
    .set({ status: "inactive", version: sql`${apiKeys.version} + 1`, updatedAt: now })
    .where(and(inArray(apiKeys.id, db.select({ id: apiKeys.id }).from(apiKeys).where(isDue).limit(BATCH)), isDue))
    .returning();
  await syncKeys(env, rows);
  return rows.length;
}

/** ScheduledJob adapter (src/scheduled.ts). */
export const expireKeysJob = async (env: Env, now: number): Promise<void> => {
  await expireKeys(env, now);
};
