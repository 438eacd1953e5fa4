/**
 * The request window: recent single requests kept in D1 (`request_logs`) besides R2, bounded by
 * time (REQUEST_LOG_WINDOW_HOURS) and by rows per organization (REQUEST_LOG_WINDOW_ROWS), whichever
 * keeps less. The window is only a fast copy: every record is in R2, and readers of the request log
 * go there for anything before the organization's *window start*, the later of `now - hours` and
 * its floor (`request_window_floors`: raised by the row trim and by window inserts that were
 * dropped). So shrinking the window loses nothing a user can see (docs/scale.md, "The window").
 */
import type { Env } from "../env";
import { HOUR_MS } from "./aggregate";

export const DEFAULT_WINDOW_HOURS = 720;
/** Rows per organization when REQUEST_LOG_WINDOW_ROWS is unset (the wrangler.jsonc default). */
export const DEFAULT_WINDOW_ROWS = 2_000;
/** `aggregation_state` row of the size watch's bound on rows (`aggregated_until`; src/usage/storage-watch.ts). */
export const WINDOW_SHRINK_ID = "request_window_shrink";

const vars = (env: Env): Record<string, unknown> => env as unknown as Record<string, unknown>;

function nonNegative(raw: unknown, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
}

/** Hours of single requests kept in D1 (`request_logs`); 0: none (reads go to R2). */
export const windowHours = (env: Env): number => nonNegative(vars(env).REQUEST_LOG_WINDOW_HOURS, DEFAULT_WINDOW_HOURS);

/** Rows per organization kept in D1, as configured; 0: none (the window is off). */
export const windowRows = (env: Env): number => nonNegative(vars(env).REQUEST_LOG_WINDOW_ROWS, DEFAULT_WINDOW_ROWS);

/** Whether the consumer writes window rows at all. */
export const windowOn = (env: Env): boolean => windowHours(env) > 0 && windowRows(env) > 0;

/** The bound on rows in effect: the configured one, or less while the size watch shrinks the window. */
export async function effectiveWindowRows(env: Env): Promise<number> {
  const configured = windowRows(env);
  const row = await env.DB.prepare("SELECT aggregated_until AS n FROM aggregation_state WHERE id = ?1").bind(WINDOW_SHRINK_ID).first<{ n: number }>();
  return row ? Math.min(configured, row.n) : configured;
}

/**
 * From when the window holds every record of the organization (null: the window is off). Before
 * it, the request log reads R2.
 */
export async function windowStart(env: Env, organizationId: string, now: number): Promise<number | null> {
  if (!windowOn(env)) return null;
  const row = await env.DB.prepare("SELECT kept_from FROM request_window_floors WHERE organization_id = ?1").bind(organizationId).first<{ kept_from: number }>();
  return Math.max(now - windowHours(env) * HOUR_MS, row?.kept_from ?? 0);
}

/** Raises organizations' floors (never lowers them): one statement, pairs bound as one JSON value. */
export function raiseFloorsStatement(db: D1Database, floors: ReadonlyMap<string, number>): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO request_window_floors (organization_id, kept_from) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1) WHERE 1
       ON CONFLICT (organization_id) DO UPDATE SET kept_from = MAX(kept_from, excluded.kept_from)`,
    )
    .bind(JSON.stringify([...floors]));
}

/**
 * After window rows were dropped (their insert failed): each organization's floor moves past the
 * newest of them, so the request log reads that time from R2 instead of showing a hole. Best-effort
 * (the database may refuse this too; then the hole shows until the window moves past it).
 */
export async function floorPastDropped(env: Env, records: ReadonlyArray<{ organizationId: string; createdAt: number }>): Promise<void> {
  const floors = new Map<string, number>();
  for (const r of records) floors.set(r.organizationId, Math.max(floors.get(r.organizationId) ?? 0, r.createdAt + 1));
  if (floors.size === 0) return;
  try {
    await raiseFloorsStatement(env.DB, floors).run();
  } catch (err) {
    console.error("request window: floors not raised after dropped rows", err instanceof Error ? err.message : String(err));
  }
}
