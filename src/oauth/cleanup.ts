/**
 * Daily cron job: deletes OAuth grants (codes, access and refresh tokens) that expired or were
 * revoked more than a day ago. Keeping them a day preserves replay detection for recently used
 * codes and rotated refresh tokens (src/oauth/tokens.ts), which need the used row to exist.
 */
import { and, isNotNull, lt, or } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { oauthGrants } from "../db/schema";

export const GRANT_GRACE_MS = 24 * 60 * 60 * 1000;
const DAILY_CRON = "17 3 * * *";

export async function purgeOAuthGrants(env: Env, now: number): Promise<number> {
  const cutoff = now - GRANT_GRACE_MS;
  const result = await getDb(env.DB)
    .delete(oauthGrants)
    .where(or(lt(oauthGrants.expiresAt, cutoff), and(isNotNull(oauthGrants.revokedAt), lt(oauthGrants.revokedAt, cutoff))))
    .run();
  return result.meta.changes;
}

export async function oauthCleanupJob(env: Env, now: number, cron: string): Promise<void> {
  if (cron !== DAILY_CRON) return;
  await purgeOAuthGrants(env, now);
}
