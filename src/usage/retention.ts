/**
 * Retention of request records (cron):
 *  - every run: trims the D1 window (`request_logs` older than REQUEST_LOG_WINDOW_HOURS, and beyond
 *    REQUEST_LOG_WINDOW_ROWS per organization; video jobs stay, the content proxy reads them) and forgets applied log ids of hours before the dedup
 *    horizon (LOG_DEDUP_HOURS; a primary-key prefix of `log_applied`);
 *  - daily: deletes R2 record objects (and request bodies, `bodies/`) of days older than
 *    REQUEST_LOG_RETENTION_DAYS (bucket lifecycle rules do the same in production;
 *    `npm run setup:cloudflare` creates them).
 * Analytics read only the hourly aggregates, so none of this changes them. Deletes in bounded chunks.
 */
import type { Env } from "../env";
import { HOUR_MS } from "./aggregate";
import { dedupHorizon, retentionDays } from "./log-consumer";
import { effectiveWindowRows, windowHours } from "./window";
import { dayPrefix, organizationsInBucket } from "./log-record";
import { CATCH_UP_COPIED_ID, OLD_ROWS_COPIED } from "./upgrade";
import { deleteExpiredBodies, deleteExpiredDropMarks } from "./bodies";

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
/** `aggregation_state` row: the bound on rows the organizations' `checked_at` refer to. */
export const ROWS_TRIM_ID = "request_window_rows_trim";
/** Organizations the trim by rows looks at per run (one index read of the bound's length each). */
const ORGS_PER_RUN = 200;

/**
 * Organizations that may hold more rows than the bound: a key used since the trim last checked
 * them (`key_last_use` holds the record's start: an hour's slack covers records applied late), the
 * longest unchecked first, so every organization gets its turn however many there are.
 */
const CANDIDATES_SQL = `SELECT k.organization_id AS o, MAX(k.last_used_at) AS u, COALESCE(f.checked_at, 0) AS c
  FROM key_last_use k LEFT JOIN request_window_floors f ON f.organization_id = k.organization_id
  GROUP BY k.organization_id HAVING u >= c - ${HOUR_MS} ORDER BY c LIMIT ?1`;

/**
 * The bound on rows per organization: for each candidate (`CANDIDATES_SQL`; all of them after the
 * bound changed), the rows older than its newest `bound` are deleted, in chunks, and its floor
 * moves up so the request log reads them from R2. At most ORGS_PER_RUN organizations and
 * MAX_CHUNKS_PER_RUN chunks a run; an organization is marked checked only once its rows are within
 * the bound, so what a run leaves comes first in the next.
 */
export async function trimWindowRows(env: Env, now: number, orgsPerRun = ORGS_PER_RUN): Promise<number> {
  const db = env.DB;
  const bound = await effectiveWindowRows(env);
  const state = await db.prepare("SELECT aggregated_until AS bound FROM aggregation_state WHERE id = ?1").bind(ROWS_TRIM_ID).first<{ bound: number }>();
  if (!state || state.bound !== bound) {
    // A new bound: every organization is checked against it again.
    await db.batch([
      db.prepare("UPDATE request_window_floors SET checked_at = 0"),
      db.prepare("INSERT INTO aggregation_state (id, aggregated_until, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET aggregated_until = excluded.aggregated_until, updated_at = excluded.updated_at").bind(ROWS_TRIM_ID, bound, now),
    ]);
  }
  const orgs = await db.prepare(CANDIDATES_SQL).bind(orgsPerRun).all<{ o: string }>();
  let deleted = 0;
  let chunks = 0;
  /** Per organization: its new floor, and whether its rows are within the bound now. */
  const seen: Array<[string, number, boolean]> = [];
  for (const { o } of orgs.results) {
    if (chunks >= MAX_CHUNKS_PER_RUN) break;
    const edge = await db.prepare(`SELECT created_at AS t FROM request_logs WHERE organization_id = ?1 AND kind <> 'video' ORDER BY created_at DESC LIMIT 1 OFFSET ?2`)
      .bind(o, bound)
      .first<{ t: number }>();
    let done = true;
    if (edge) {
      for (done = false; !done && chunks < MAX_CHUNKS_PER_RUN; chunks++) {
        const res = await db.prepare(`DELETE FROM request_logs WHERE id IN (SELECT id FROM request_logs WHERE organization_id = ?1 AND created_at <= ?2 AND ${trimmable(3)} LIMIT ?4)`)
          .bind(o, edge.t, dedupHorizon(env, now), CHUNK)
          .run();
        deleted += res.meta.changes ?? 0;
        done = (res.meta.changes ?? 0) < CHUNK;
      }
    }
    // The floor moves past the trimmed rows even when a chunk limit left some behind (the window
    // still holds every record after it); checked only when nothing is left.
    seen.push([o, edge ? edge.t + 1 : 0, done]);
  }
  if (seen.length > 0) await floorsStatement(db, seen, now).run();
  return deleted;
}

/** Floors raised (never lowered); organizations within the bound marked checked at `now`, the others left to be checked first. */
function floorsStatement(db: D1Database, seen: ReadonlyArray<[string, number, boolean]>, now: number): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO request_window_floors (organization_id, kept_from, checked_at)
       SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), CASE WHEN json_extract(value, '$[2]') THEN ?2 ELSE 0 END FROM json_each(?1) WHERE 1
       ON CONFLICT (organization_id) DO UPDATE SET kept_from = MAX(kept_from, excluded.kept_from), checked_at = excluded.checked_at`,
    )
    .bind(JSON.stringify(seen), now);
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
  if (cron === RETENTION_CRON) {
    await deleteExpiredObjects(env, now);
    // Request bodies (projects with logBodies) go with their records.
    await deleteExpiredBodies(env, now, retentionDays(env), R2_LOOKBACK_DAYS);
    await deleteExpiredDropMarks(env, now, retentionDays(env));
  }
}
