/**
 * The D1 database's size, watched by the every-minute cron (docs/scale.md, "D1 size watched"). D1
 * reports the size after every statement (`meta.size_after`); one `SELECT 1` reads it.
 *  - above 80% of D1_SIZE_LIMIT_BYTES the operator is told (OPERATOR_EMAIL; at most once a day,
 *    and always in the logs);
 *  - above 90% the request window shrinks itself: its bound on rows per organization is halved
 *    (at most every 10 minutes, down to MIN_SHRUNK_ROWS), so the trim deletes older rows, which
 *    the request log then reads from R2. Below 80% the configured bound applies again.
 * Nothing here stops billing: the window's inserts are best-effort (src/usage/log-consumer.ts).
 */
import type { Env } from "../env";
import { sendMail } from "../lib/mail";
import { effectiveWindowRows, WINDOW_SHRINK_ID, windowRows } from "./window";

/** D1's limit on the paid plan (10 GB; the free plan: 500 MB, set D1_SIZE_LIMIT_BYTES=500000000). */
export const DEFAULT_D1_SIZE_LIMIT = 10_000_000_000;
export const ALERT_RATIO = 0.8;
export const SHRINK_RATIO = 0.9;
/** The bound on rows the shrinking stops at. */
export const MIN_SHRUNK_ROWS = 100;
const SHRINK_EVERY_MS = 10 * 60_000;
const ALERT_EVERY_MS = 86_400_000;
/** `aggregation_state` row of the last alert: `aggregated_until` the size then, `updated_at` when. */
export const STORAGE_ALERT_ID = "storage_alert";

export function d1SizeLimit(env: Env): number {
  const n = Number(env.D1_SIZE_LIMIT_BYTES);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : DEFAULT_D1_SIZE_LIMIT;
}

/** The database's size in bytes, as D1 reports it after a statement (null if it does not). */
export async function d1Size(db: D1Database): Promise<number | null> {
  const res = await db.prepare("SELECT 1").run();
  const size = res.meta.size_after;
  return typeof size === "number" && size > 0 ? size : null;
}

export interface StorageHigh {
  sizeBytes: number;
  limitBytes: number;
  /** The window's bound on rows per organization in effect after this check. */
  windowRows: number;
  at: number;
}

const upsertState = (db: D1Database, id: string, a: number, at: number) =>
  db.prepare("INSERT INTO aggregation_state (id, aggregated_until, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET aggregated_until = excluded.aggregated_until, updated_at = excluded.updated_at").bind(id, a, at);

/**
 * The operator hears of a database above ALERT_RATIO: an e-mail to OPERATOR_EMAIL through the
 * mail path. This is the one place storage alerts leave from: a `storage.high` webhook event
 * belongs here too, once the gateway delivers webhooks.
 */
export async function announceStorageHigh(env: Env, alert: StorageHigh): Promise<void> {
  const pct = ((alert.sizeBytes / alert.limitBytes) * 100).toFixed(1);
  const text =
    `The gateway's D1 database holds ${alert.sizeBytes} bytes, ${pct}% of its limit of ${alert.limitBytes} bytes (D1_SIZE_LIMIT_BYTES).\n` +
    `Above ${SHRINK_RATIO * 100}% the request window shrinks itself; it keeps at most ${alert.windowRows} rows per organization now. ` +
    `Lower REQUEST_LOG_WINDOW_ROWS / REQUEST_LOG_WINDOW_HOURS or LOG_DEDUP_HOURS (docs/scale.md). Billing and the request log (R2) are not affected.\n`;
  console.error(`D1 size ${pct}% of its limit`, alert.sizeBytes, alert.limitBytes);
  if (env.OPERATOR_EMAIL) await sendMail(env, { to: env.OPERATOR_EMAIL, subject: `Switchboard: D1 database at ${pct}% of its limit`, text });
}

/** Reads the size, alerts, shrinks or restores the window's bound; the alert when above ALERT_RATIO. */
export async function watchStorage(env: Env, now: number): Promise<StorageHigh | null> {
  const size = await d1Size(env.DB);
  if (size === null) return null;
  const limit = d1SizeLimit(env);
  const ratio = size / limit;
  const state = await env.DB.prepare("SELECT id, aggregated_until AS a, updated_at AS at FROM aggregation_state WHERE id IN (?1, ?2)").bind(STORAGE_ALERT_ID, WINDOW_SHRINK_ID).all<{ id: string; a: number; at: number }>();
  const row = (id: string) => state.results.find((r) => r.id === id);
  if (ratio < ALERT_RATIO) {
    // Room again: the configured bound applies (the trim goes over every organization once).
    if (row(WINDOW_SHRINK_ID)) await env.DB.prepare("DELETE FROM aggregation_state WHERE id = ?1").bind(WINDOW_SHRINK_ID).run();
    return null;
  }
  let rows = await effectiveWindowRows(env);
  const shrunk = row(WINDOW_SHRINK_ID);
  if (ratio >= SHRINK_RATIO && rows > MIN_SHRUNK_ROWS && (!shrunk || now - shrunk.at >= SHRINK_EVERY_MS)) {
    rows = Math.max(MIN_SHRUNK_ROWS, Math.floor(Math.min(rows, windowRows(env)) / 2));
    await upsertState(env.DB, WINDOW_SHRINK_ID, rows, now).run();
    console.error(`D1 above ${SHRINK_RATIO * 100}% of its limit: the request window keeps at most ${rows} rows per organization`);
  }
  const alert: StorageHigh = { sizeBytes: size, limitBytes: limit, windowRows: rows, at: now };
  const last = row(STORAGE_ALERT_ID);
  if (!last || now - last.at >= ALERT_EVERY_MS) {
    await upsertState(env.DB, STORAGE_ALERT_ID, size, now).run();
    await announceStorageHigh(env, alert);
  }
  return alert;
}

/** Cron job (src/scheduled.ts), every minute. */
export async function storageWatchJob(env: Env, now: number): Promise<void> {
  await watchStorage(env, now);
}
