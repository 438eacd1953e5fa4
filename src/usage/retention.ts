/**
 * Retention of request records (cron):
 *  - every run: trims the D1 window (`request_logs` older than REQUEST_LOG_WINDOW_HOURS; video jobs
 *    stay, the content proxy reads them) and forgets applied log ids of hours before the dedup
 *    horizon (LOG_DEDUP_HOURS; a primary-key prefix of `log_applied`);
 *  - daily: deletes R2 record objects (and request bodies, `bodies/`) of days older than
 *    REQUEST_LOG_RETENTION_DAYS (bucket lifecycle rules do the same in production;
 *    `npm run setup:cloudflare` creates them).
 * Analytics read only the hourly aggregates, so none of this changes them. Deletes in bounded chunks.
 */
import type { Env } from "../env";
import { HOUR_MS } from "./aggregate";
import { dedupHorizon, retentionDays, windowHours } from "./log-consumer";
import { dayPrefix, organizationsInBucket } from "./log-record";
import { CATCH_UP_COPIED_ID, OLD_ROWS_COPIED } from "./upgrade";
import { deleteExpiredBodies } from "./bodies";

const DAY_MS = 86_400_000;
/** Rows per DELETE statement and statements per run, to stay within D1 limits. */
const CHUNK = 5_000;
const MAX_CHUNKS_PER_RUN = 20;
/** The daily cron of wrangler.jsonc. */
export const RETENTION_CRON = "17 3 * * *";
/** Days looked back for R2 objects to delete (a missed daily run is caught up). */
const R2_LOOKBACK_DAYS = 7;

export { dedupHours, retentionDays } from "./log-consumer";

async function deleteChunks(env: Env, query: string, ...params: number[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < MAX_CHUNKS_PER_RUN; i++) {
    const res = await env.DB.prepare(query).bind(...params, CHUNK).run();
    const changes = res.meta.changes ?? 0;
    deleted += changes;
    if (changes < CHUNK) break;
  }
  return deleted;
}

export interface RetentionRun {
  cutoff: number;
  deleted: number;
  forgotten: number;
}

/** The D1 side: window rows and applied ids past their time. */
export async function trimWindow(env: Env, now: number): Promise<RetentionRun> {
  const cutoff = now - windowHours(env) * HOUR_MS;
  // Not before the upgrade's copy step has the old path's rows in R2 (src/usage/upgrade.ts). The
  // rows the old path inserted (created before the copy step) stay until the dedup horizon too:
  // the consumer recognises an old outbox's replay of one by its row (src/usage/log-consumer.ts).
  const deleted = await deleteChunks(
    env,
    `DELETE FROM request_logs WHERE id IN (SELECT id FROM request_logs WHERE created_at < ?1 AND kind <> 'video' AND ${OLD_ROWS_COPIED}
      AND (created_at < ?2 OR created_at >= (SELECT updated_at FROM aggregation_state WHERE id = '${CATCH_UP_COPIED_ID}')) LIMIT ?3)`,
    cutoff,
    dedupHorizon(env, now),
  );
  const forgotten = await deleteChunks(
    env,
    "DELETE FROM log_applied WHERE (hour_start, id) IN (SELECT hour_start, id FROM log_applied WHERE hour_start < ?1 ORDER BY hour_start LIMIT ?2)",
    dedupHorizon(env, now),
  );
  return { cutoff, deleted, forgotten };
}

/** The R2 side: every organization's day prefixes older than the retention period. */
export async function deleteExpiredObjects(env: Env, now: number): Promise<number> {
  const bucket = env.LOGS_BUCKET;
  const orgs = await organizationsInBucket(bucket);
  let deleted = 0;
  const oldest = now - (retentionDays(env) + R2_LOOKBACK_DAYS) * DAY_MS;
  for (let day = now - (retentionDays(env) + 1) * DAY_MS; day >= oldest; day -= DAY_MS) {
    for (const org of orgs) {
      let c: string | undefined;
      do {
        const page = await bucket.list({ prefix: dayPrefix(org, day), cursor: c });
        if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
        deleted += page.objects.length;
        c = page.truncated ? page.cursor : undefined;
      } while (c);
    }
  }
  return deleted;
}

/** Cron job (src/scheduled.ts). */
export async function retentionJob(env: Env, now: number, cron: string): Promise<void> {
  await trimWindow(env, now);
  if (cron === RETENTION_CRON) {
    await deleteExpiredObjects(env, now);
    // Request bodies (projects with logBodies) go with their records.
    await deleteExpiredBodies(env, now, retentionDays(env), R2_LOOKBACK_DAYS);
  }
}
