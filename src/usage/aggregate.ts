/**
 * Hourly aggregation of `request_logs` into `usage_hourly` (spec 2.8: analytics read only the
 * aggregates, which survive request-log retention).
 *
 * Runs every minute from the cron. Each run (re)builds a contiguous range of hours:
 *   [aggregatedUntil, current hour end)
 * by deleting and re-inserting the rows of those hours in one D1 batch (a transaction), so a run is
 * idempotent and a repeated or concurrent run converges to the same rows. Hours that ended more
 * than FINAL_GRACE_MS ago are final: `aggregation_state.aggregatedUntil` moves past them and they
 * are never rebuilt (so retention may delete their logs). The current hour and the not-yet-final
 * previous one are rebuilt on every run for freshness. After missed runs the next run catches up
 * from `aggregatedUntil`, at most MAX_CATCH_UP_MS per batch.
 */
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb, type Db } from "../db/client";
import { aggregationState } from "../db/schema";

export const HOUR_MS = 3_600_000;
/**
 * Request logs are written off the hot path (batched, after long streams) with `created_at` = the
 * request's start; give such late rows this long before an hour is final.
 */
export const FINAL_GRACE_MS = 15 * 60_000;
/** Largest range rebuilt by one statement pair. */
const MAX_CATCH_UP_MS = 7 * 24 * HOUR_MS;
/** Bounds one run's work; the next run goes on from where this one stopped. */
const MAX_BATCHES_PER_RUN = 8;
export const AGGREGATION_STATE_ID = "usage_hourly";

export const hourStartOf = (t: number): number => t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS);

export interface AggregationState {
  aggregatedUntil: number;
  updatedAt: number;
}

export async function readAggregationState(db: Db): Promise<AggregationState | null> {
  const rows = await db
    .select({ aggregatedUntil: aggregationState.aggregatedUntil, updatedAt: aggregationState.updatedAt })
    .from(aggregationState)
    .where(sql`${aggregationState.id} = ${AGGREGATION_STATE_ID}`)
    .limit(1);
  return rows[0] ?? null;
}

/**
 * The provider and model of a request refused before any provider was tried (unknown model, denied
 * by a rule, over a limit, invalid): counted under this label of its own, so rankings show neither a
 * provider "unknown" nor a model id the catalogue does not have.
 */
export const REFUSED = "refused";

/**
 * Rebuild statements for hours in [from, to): delete then re-insert grouped sums. Plain D1
 * statements (bound parameters) so they can share one `DB.batch` transaction with the state row.
 */
function rebuildStatements(d1: D1Database, from: number, to: number, now: number): D1PreparedStatement[] {
  const del = d1.prepare("DELETE FROM usage_hourly WHERE hour_start >= ?1 AND hour_start < ?2").bind(from, to);
  const ins = d1
    .prepare(
      `INSERT INTO usage_hourly (
        hour_start, organization_id, project_id, api_key_id, provider, model, source_app,
        requests, errors, cache_hits, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens,
        total_tokens, cost_pico, credits_cost_pico, byok_cost_pico, data_storage_cost_pico, updated_at
      )
      SELECT
        created_at - (created_at % ${HOUR_MS}) AS h,
        MAX(organization_id),
        project_id,
        api_key_id,
        COALESCE(used_provider, CASE WHEN status_code >= 400 THEN '${REFUSED}' END, NULLIF(requested_provider, ''), 'unknown') AS p,
        CASE WHEN used_provider IS NULL AND status_code >= 400 THEN '${REFUSED}' ELSE COALESCE(used_model, requested_model, 'unknown') END AS m,
        CASE WHEN source_app IS NULL OR source_app = '' THEN 'unknown' ELSE source_app END AS s,
        COUNT(*),
        SUM(CASE WHEN status_code >= 400 THEN 1 ELSE 0 END),
        SUM(CASE WHEN cached THEN 1 ELSE 0 END),
        SUM(prompt_tokens), SUM(completion_tokens), SUM(reasoning_tokens), SUM(cached_tokens), SUM(total_tokens),
        SUM(cost_pico), SUM(credits_cost_pico), SUM(byok_cost_pico), SUM(data_storage_cost_pico),
        ?3
      FROM request_logs
      WHERE created_at >= ?1 AND created_at < ?2
      GROUP BY h, project_id, api_key_id, p, m, s`,
    )
    .bind(from, to, now);
  return [del, ins];
}

/** Upsert of the bookkeeping row; `aggregatedUntil` never moves backwards. */
function upsertState(d1: D1Database, aggregatedUntil: number, now: number): D1PreparedStatement {
  return d1
    .prepare(
      `INSERT INTO aggregation_state (id, aggregated_until, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (id) DO UPDATE SET aggregated_until = MAX(aggregated_until, excluded.aggregated_until), updated_at = excluded.updated_at`,
    )
    .bind(AGGREGATION_STATE_ID, aggregatedUntil, now);
}

export interface AggregationRun {
  /** Ranges rebuilt, [from, to) epoch ms. */
  rebuilt: Array<{ from: number; to: number }>;
  aggregatedUntil: number | null;
}

/** One aggregation pass at time `now` (the cron's scheduled time). */
export async function aggregateUsage(env: Env, now: number): Promise<AggregationRun> {
  const db = getDb(env.DB);
  const state = await readAggregationState(db);
  let from = state?.aggregatedUntil ?? null;
  if (from === null) {
    // First run: start at the oldest log. No logs yet: nothing to do (and no state to pin).
    const first = await db.all<{ t: number | null }>(sql`SELECT MIN(created_at) AS t FROM request_logs`);
    const t = first[0]?.t ?? null;
    if (t === null) return { rebuilt: [], aggregatedUntil: null };
    from = hourStartOf(t);
  }
  const currentHourEnd = hourStartOf(now) + HOUR_MS;
  /** Hours ending at or before this are final. */
  const finalUntil = hourStartOf(now - FINAL_GRACE_MS);
  const rebuilt: AggregationRun["rebuilt"] = [];
  let until = Math.max(from, state?.aggregatedUntil ?? from);

  for (let i = 0; i < MAX_BATCHES_PER_RUN && from < currentHourEnd; i++) {
    const to = Math.min(from + MAX_CATCH_UP_MS, currentHourEnd);
    const nextUntil = Math.max(until, Math.min(to, finalUntil));
    await env.DB.batch([...rebuildStatements(env.DB, from, to, now), upsertState(env.DB, nextUntil, now)]);
    rebuilt.push({ from, to });
    until = nextUntil;
    from = to;
  }
  return { rebuilt, aggregatedUntil: until };
}

/** Cron job (src/scheduled.ts). */
export async function aggregateUsageJob(env: Env, now: number): Promise<void> {
  await aggregateUsage(env, now);
}
