/**
 * The upgrade from the path before the LOGS queue (docs/scale.md, "Upgrading"). There, the key
 * outboxes inserted rows into `request_logs` and the every-minute cron rebuilt the hours from
 * `aggregation_state.aggregatedUntil` (U) to the current hour from those rows (delete and
 * re-insert); hours before U were final. So at the upgrade the aggregates of the hours from U on
 * hold the rows the last old cron run saw, and rows inserted after it (the last minute's outbox
 * flushes) are in no aggregate. The consumer now adds queue records to those same hours.
 *
 * The catch-up, run by the every-minute cron until done (state rows in `aggregation_state`):
 *  1. copy: before anything else of the new cron (the window trim and closing hours wait for it),
 *     `request_logs` rows from U on that are not in `log_applied` (written by the old path) are
 *     written to R2 like any record and marked applied (an old outbox replaying one of them
 *     through the queue is then skipped). Chunked; R2 before D1, so a retry finds what is left.
 *  2. rebuild: every hour from U to the upgrade's hour, once it is closed, is rebuilt from R2
 *     (`rebuildHour`), which now holds the old rows and the queue's records, each id once.
 * Hours before U are untouched (already final). A deployment without old rows from U on (a new
 * one) only records that the catch-up is done.
 */
import type { Env } from "../env";
import { AGGREGATION_STATE_ID, CATCH_UP_COPIED_ID, closedUntil, closeHours, HOUR_MS, hourStartOf, rebuildHour, rebuildMarkedHours } from "./aggregate";
import { retentionDays, writeObjects } from "./log-consumer";
import { recordFromDbRow } from "./log-record";

/** `aggregated_until`: the next hour to rebuild; `updated_at`: the first hour after the range. */
export const CATCH_UP_ID = "request_logs_catch_up";
/** Present once every old row is in R2 and marked applied (`recordsBoundary`, src/usage/aggregate.ts). */
export { CATCH_UP_COPIED_ID };
const CHUNK = 1_000;
/** Hours rebuilt per cron run. */
const REBUILDS_PER_RUN = 6;

/** SQL condition: the copy step is done (the window trim may delete rows). */
export const OLD_ROWS_COPIED = `EXISTS (SELECT 1 FROM aggregation_state WHERE id = '${CATCH_UP_COPIED_ID}')`;

const OLD_ROWS_SQL = `SELECT * FROM request_logs r WHERE r.created_at >= ?1
  AND NOT EXISTS (SELECT 1 FROM log_applied a WHERE a.hour_start = r.created_at - (r.created_at % ${HOUR_MS}) AND a.id = r.id)
  ORDER BY r.created_at, r.id LIMIT ?2`;

const MARK_SQL = `INSERT OR IGNORE INTO log_applied (hour_start, id) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1)`;

const stateRow = (db: D1Database, id: string, a: number, b: number) =>
  db.prepare("INSERT OR IGNORE INTO aggregation_state (id, aggregated_until, updated_at) VALUES (?1, ?2, ?3)").bind(id, a, b);

/** Step 1 (idempotent; a no-op once done). */
export async function copyOldRows(env: Env, now: number): Promise<void> {
  const db = env.DB;
  const done = await db.prepare("SELECT id FROM aggregation_state WHERE id IN (?1, ?2)").bind(CATCH_UP_ID, CATCH_UP_COPIED_ID).all<{ id: string }>();
  const ids = new Set(done.results.map((r) => r.id));
  if (ids.has(CATCH_UP_COPIED_ID)) return;
  // U as the old cron left it (closing hours waits for this step). No state: the old cron never
  // ran, nothing was aggregated: from the oldest row on.
  const state = await db.prepare("SELECT aggregated_until AS u FROM aggregation_state WHERE id = ?1").bind(AGGREGATION_STATE_ID).first<{ u: number }>();
  const from = state?.u ?? 0;
  const end = hourStartOf(now) + HOUR_MS;
  for (;;) {
    const rows = await db.prepare(OLD_ROWS_SQL).bind(from, CHUNK).all<Record<string, unknown>>();
    const records = rows.results.map(recordFromDbRow);
    if (records.length === 0) break;
    await writeObjects(env, records);
    const pairs = JSON.stringify(records.map((r) => [hourStartOf(r.createdAt), r.id]));
    // The range is recorded with the first chunk (INSERT OR IGNORE: a retry keeps it).
    const start = state ? from : hourStartOf(records[0]!.createdAt);
    await db.batch([stateRow(db, CATCH_UP_ID, start, end), db.prepare(MARK_SQL).bind(pairs)]);
    if (records.length < CHUNK) break;
  }
  // No old rows at all: an empty range. The boundary: the hours before U were aggregated from rows
  // not copied to R2 (no old cron: every old row was copied, no boundary); every old row was
  // created before now.
  await db.batch([stateRow(db, CATCH_UP_ID, end, end), stateRow(db, CATCH_UP_COPIED_ID, state?.u ?? 0, now)]);
}

/** Step 2: rebuilds the closed hours of the range from R2, a few per run. */
export async function rebuildOldHours(env: Env, now: number): Promise<number> {
  const db = env.DB;
  const state = await db
    .prepare("SELECT aggregated_until AS next, updated_at AS end FROM aggregation_state WHERE id = ?1 AND EXISTS (SELECT 1 FROM aggregation_state WHERE id = ?2)")
    .bind(CATCH_UP_ID, CATCH_UP_COPIED_ID)
    .first<{ next: number; end: number }>();
  if (!state) return 0;
  // Hours past R2's retention have lost their records there: left as they are.
  let hour = Math.max(state.next, hourStartOf(now - retentionDays(env) * 86_400_000));
  let rebuilt = 0;
  while (hour < state.end && hour + HOUR_MS <= closedUntil(now) && rebuilt < REBUILDS_PER_RUN) {
    await rebuildHour(env, hour, now);
    hour += HOUR_MS;
    rebuilt++;
    await db.prepare("UPDATE aggregation_state SET aggregated_until = ?2 WHERE id = ?1").bind(CATCH_UP_ID, hour).run();
  }
  return rebuilt;
}

/**
 * Cron job (src/scheduled.ts): closes hours (src/usage/aggregate.ts), after the copy step (it reads
 * where the old cron stopped, which closing moves); the catch-up's rebuilds follow, then the hours
 * still marked for a rebuild.
 */
export async function aggregateUsageJob(env: Env, now: number): Promise<void> {
  await copyOldRows(env, now);
  await closeHours(env, now);
  await rebuildOldHours(env, now);
  // Hours marked for a rebuild by a consumer or a rebuild that stopped before it committed.
  await rebuildMarkedHours(env, now);
}
