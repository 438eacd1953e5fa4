/**
 * Retention of request records (cron):
 *  - every run: trims the D1 window (`request_logs` older than REQUEST_LOG_WINDOW_HOURS, and beyond
 *    REQUEST_LOG_WINDOW_ROWS per organization; video jobs stay, the content proxy reads them) and forgets applied log ids of hours before the dedup
 *    horizon (LOG_DEDUP_HOURS; a primary-key prefix of `log_applied`);
 *  - daily: deletes R2 record objects of days older than REQUEST_LOG_RETENTION_DAYS (a bucket
 *    lifecycle rule does the same in production; `npm run setup:cloudflare` creates it).
 * Analytics read only the hourly aggregates, so none of this changes them. Deletes in bounded chunks.
 */
import type { Env } from "../env";
import { HOUR_MS } from "./aggregate";
import { dedupHorizon, retentionDays } from "./log-consumer";
import { effectiveWindowRows, raiseFloorsStatement, windowHours } from "./window";
import { dayPrefix, organizationsInBucket } from "./log-record";
import { CATCH_UP_COPIED_ID, OLD_ROWS_COPIED } from "./upgrade";

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
  /** Rows deleted by the bound on rows per organization. */
  deletedOverRows: number;
}

/**
 * Rows the trim may delete: not a video job (the content proxy reads them); not before the
 * upgrade's copy step has the old path's rows in R2 (src/usage/upgrade.ts); a row the old path
 * inserted (created before the copy step) only once the dedup horizon (?h) has passed it: the
 * consumer recognises an old outbox's replay of one by its row (src/usage/log-consumer.ts).
 */
const TRIMMABLE = `kind <> 'video' AND ${OLD_ROWS_COPIED}
  AND (created_at < ?h OR created_at >= (SELECT updated_at FROM aggregation_state WHERE id = '${CATCH_UP_COPIED_ID}'))`;
const trimmable = (horizonParam: number): string => TRIMMABLE.replace("?h", `?${horizonParam}`);
/** `aggregation_state` row: when the trim by rows last went through every organization that wrote. */
export const ROWS_TRIM_ID = "request_window_rows_trim";
/** Organizations the trim by rows looks at per run (one index read of the bound's length each). */
const ORGS_PER_RUN = 200;

/**
 * The bound on rows per organization: for each organization that may have grown since the last
 * run (a key used since then, per `key_last_use`; every organization on the first run or after the
 * bound shrank), the rows older than its newest `bound` are deleted, in chunks, and its floor
 * moves up so the request log reads them from R2. At most ORGS_PER_RUN organizations and
 * MAX_CHUNKS_PER_RUN chunks a run; an unfinished run leaves its mark where it was, so the next one
 * goes over the same organizations again.
 */
export async function trimWindowRows(env: Env, now: number): Promise<number> {
  const bound = await effectiveWindowRows(env);
  const state = await env.DB.prepare("SELECT aggregated_until AS bound, updated_at AS at FROM aggregation_state WHERE id = ?1").bind(ROWS_TRIM_ID).first<{ bound: number; at: number }>();
  // Keys' last use is the record's start: an hour's slack covers records applied late.
  const since = state && state.bound === bound ? state.at - HOUR_MS : 0;
  const orgs = await env.DB.prepare("SELECT DISTINCT organization_id AS o FROM key_last_use WHERE last_used_at >= ?1 ORDER BY o LIMIT ?2")
    .bind(since, ORGS_PER_RUN + 1)
    .all<{ o: string }>();
  let deleted = 0;
  let chunks = 0;
  const floors = new Map<string, number>();
  for (const { o } of orgs.results.slice(0, ORGS_PER_RUN)) {
    if (chunks >= MAX_CHUNKS_PER_RUN) break;
    const edge = await env.DB.prepare(`SELECT created_at AS t FROM request_logs WHERE organization_id = ?1 AND kind <> 'video' ORDER BY created_at DESC LIMIT 1 OFFSET ?2`)
      .bind(o, bound)
      .first<{ t: number }>();
    if (!edge) continue;
    for (; chunks < MAX_CHUNKS_PER_RUN; chunks++) {
      const res = await env.DB.prepare(
        `DELETE FROM request_logs WHERE id IN (SELECT id FROM request_logs WHERE organization_id = ?1 AND created_at <= ?2 AND ${trimmable(3)} LIMIT ?4)`,
      )
        .bind(o, edge.t, dedupHorizon(env, now), CHUNK)
        .run();
      deleted += res.meta.changes ?? 0;
      if ((res.meta.changes ?? 0) < CHUNK) break;
    }
    floors.set(o, edge.t + 1);
  }
  if (floors.size > 0) await raiseFloorsStatement(env.DB, floors).run();
  if (chunks < MAX_CHUNKS_PER_RUN && orgs.results.length <= ORGS_PER_RUN) {
    await env.DB.prepare(
      "INSERT INTO aggregation_state (id, aggregated_until, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET aggregated_until = excluded.aggregated_until, updated_at = excluded.updated_at",
    )
      .bind(ROWS_TRIM_ID, bound, now)
      .run();
  }
  return deleted;
}

/** The D1 side: window rows and applied ids past their time. */
export async function trimWindow(env: Env, now: number): Promise<RetentionRun> {
  const cutoff = now - windowHours(env) * HOUR_MS;
  const deleted = await deleteChunks(env, `DELETE FROM request_logs WHERE id IN (SELECT id FROM request_logs WHERE created_at < ?1 AND ${trimmable(2)} LIMIT ?3)`, cutoff, dedupHorizon(env, now));
  const forgotten = await deleteChunks(
    env,
    "DELETE FROM log_applied WHERE (hour_start, id) IN (SELECT hour_start, id FROM log_applied WHERE hour_start < ?1 ORDER BY hour_start LIMIT ?2)",
    dedupHorizon(env, now),
  );
  const deletedOverRows = await trimWindowRows(env, now);
  return { cutoff, deleted, forgotten, deletedOverRows };
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
  if (cron === RETENTION_CRON) await deleteExpiredObjects(env, now);
}
