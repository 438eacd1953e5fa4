/**
 * Request-log retention (daily cron). Deletes `request_logs` rows older than
 * `REQUEST_LOG_RETENTION_DAYS`, but only in hours the aggregation job has finalized, so analytics
 * (which read `usage_hourly`) never change because of it. Deletes in bounded chunks.
 */
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { readAggregationState } from "./aggregate";

const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 30;
/** Rows per DELETE statement and statements per run, to stay within D1 limits. */
const CHUNK = 5_000;
const MAX_CHUNKS_PER_RUN = 20;
/** The daily cron of wrangler.jsonc; the every-minute cron does not run retention. */
export const RETENTION_CRON = "17 3 * * *";

export function retentionDays(env: Env): number {
  const n = Number(env.REQUEST_LOG_RETENTION_DAYS);
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : DEFAULT_RETENTION_DAYS;
}

export interface RetentionRun {
  cutoff: number | null;
  deleted: number;
}

export async function deleteExpiredRequestLogs(env: Env, now: number): Promise<RetentionRun> {
  const db = getDb(env.DB);
  const state = await readAggregationState(db);
  if (!state) return { cutoff: null, deleted: 0 };
  const cutoff = Math.min(now - retentionDays(env) * DAY_MS, state.aggregatedUntil);
  let deleted = 0;
  for (let i = 0; i < MAX_CHUNKS_PER_RUN; i++) {
    const res = await db.run(
      sql`DELETE FROM request_logs WHERE id IN (SELECT id FROM request_logs WHERE created_at < ${cutoff} LIMIT ${CHUNK})`,
    );
    const changes = res.meta.changes ?? 0;
    deleted += changes;
    if (changes < CHUNK) break;
  }
  return { cutoff, deleted };
}

/** Cron job (src/scheduled.ts): runs on the daily trigger only. */
export async function retentionJob(env: Env, now: number, cron: string): Promise<void> {
  if (cron !== RETENTION_CRON) return;
  await deleteExpiredRequestLogs(env, now);
}
