/**
 * Hourly aggregates (`usage_hourly`; spec 2.8: analytics read only these). The LOGS queue consumer
 * adds every batch of request records to them, exactly once per record (src/usage/log-consumer.ts).
 * This module keeps the hours' bookkeeping and can recompute an hour from the raw records:
 *  - the cron (every minute) CLOSES hours: `aggregation_state.aggregatedUntil` moves to the start
 *    of the last hour that ended more than FINAL_GRACE_MS ago (records are sent after long
 *    streams and batched; `created_at` is the request's start), and `updatedAt` says when the
 *    aggregates were last known current (analytics report it);
 *  - `rebuildHour` (POST /v1/admin/usage/rebuild?hour=) replaces one closed hour's aggregates by
 *    the sums of its records in R2, so aggregates can always be recomputed from the raw records.
 */
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import type { Db } from "../db/client";
import { aggregationState } from "../db/schema";
import { hourPrefix, readNdjsonGz, type LogRecord } from "./log-record";
import { REFUND_KIND } from "./request-log";

export const HOUR_MS = 3_600_000;
/** Records reach the consumer after their request ended (long streams, batching): an hour closes this long after its end. */
export const FINAL_GRACE_MS = 15 * 60_000;
export const AGGREGATION_STATE_ID = "usage_hourly";
/**
 * Written once the upgrade's copy step is done (src/usage/upgrade.ts): `aggregated_until` is the
 * first hour whose records are all in R2 (0: every hour's are), `updated_at` the time of the copy:
 * every row the path before the queue inserted into `request_logs` was created before it.
 */
export const CATCH_UP_COPIED_ID = "request_logs_catch_up_copied";

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

/** Upsert of the bookkeeping row; `aggregatedUntil` never moves backwards. */
function upsertState(d1: D1Database, aggregatedUntil: number, now: number): D1PreparedStatement {
  return d1
    .prepare(
      `INSERT INTO aggregation_state (id, aggregated_until, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (id) DO UPDATE SET aggregated_until = MAX(aggregated_until, excluded.aggregated_until), updated_at = excluded.updated_at`,
    )
    .bind(AGGREGATION_STATE_ID, aggregatedUntil, now);
}

/** The hours before this are closed at `now`. */
export const closedUntil = (now: number): number => hourStartOf(now - FINAL_GRACE_MS);

/** One cron pass at time `now`: closes the hours that ended more than the grace period ago. */
export async function closeHours(env: Env, now: number): Promise<AggregationState> {
  const until = closedUntil(now);
  await upsertState(env.DB, until, now).run();
  return { aggregatedUntil: until, updatedAt: now };
}

// The cron job (aggregateUsageJob) is in src/usage/upgrade.ts: closing hours waits for the upgrade's copy step.

/** Where the records in R2 begin, as the upgrade from the path before the queue left it (docs/scale.md). */
export interface RecordsBoundary {
  /**
   * The first hour a rebuild from R2 is exact for: the hours before it were aggregated by the path
   * before the queue from `request_logs` rows that were never copied to R2 (0: every hour; null:
   * none yet, the upgrade's copy step has not run).
   */
  rebuildFrom: number | null;
  /**
   * Records created before this may be rows the path before the queue inserted into
   * `request_logs` and debited itself (an outbox replaying one after the upgrade); Infinity until
   * the copy step ran.
   */
  oldBefore: number;
}

/** The statement `recordsBoundary` reads (to batch it with other reads). */
export const boundaryStatement = (db: D1Database): D1PreparedStatement =>
  db.prepare("SELECT id, aggregated_until AS a, updated_at AS u FROM aggregation_state WHERE id IN (?1, ?2)").bind(AGGREGATION_STATE_ID, CATCH_UP_COPIED_ID);

/**
 * The boundary from the state rows. The copy step's row gives it. Without it, a state row of the
 * hours' cron is the old path's (the new cron writes its own only after the copy step): the
 * upgrade is pending, no hour can be rebuilt yet. Neither row: a new deployment, no boundary.
 */
export function boundaryOf(rows: ReadonlyArray<{ id: string; a: number; u: number }>): RecordsBoundary {
  const copied = rows.find((r) => r.id === CATCH_UP_COPIED_ID);
  if (copied) return { rebuildFrom: copied.a, oldBefore: copied.u };
  return { rebuildFrom: rows.some((r) => r.id === AGGREGATION_STATE_ID) ? null : 0, oldBefore: Infinity };
}

export async function recordsBoundary(db: D1Database): Promise<RecordsBoundary> {
  return boundaryOf((await boundaryStatement(db).all<{ id: string; a: number; u: number }>()).results);
}

// ---------- rebuild from R2 ----------

/** Every organization with records (the first path segment under `logs/`). */
async function organizationsInBucket(bucket: R2Bucket): Promise<string[]> {
  const orgs: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: "logs/", delimiter: "/", cursor });
    for (const p of page.delimitedPrefixes) orgs.push(p.slice("logs/".length, -1));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return orgs;
}

/** The records of one organization's hour in R2, each id once (docs/scale.md: repeated ids are skipped). */
export async function hourRecords(bucket: R2Bucket, orgId: string, hourStart: number): Promise<LogRecord[]> {
  const seen = new Set<string>();
  const out: LogRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: hourPrefix(orgId, hourStart), cursor });
    for (const obj of page.objects) {
      const body = await bucket.get(obj.key);
      if (!body) continue;
      for (const r of await readNdjsonGz(body.body)) {
        if (seen.has(r.id)) continue;
        seen.add(r.id);
        out.push(r);
      }
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return out;
}

interface HourGroup {
  o: string; pj: string; k: string; p: string; m: string; s: string;
  n: number; e: number; ch: number; pt: number; ct: number; rt: number; cdt: number; tt: number;
  cost: bigint; cr: bigint; byk: bigint; ds: bigint;
}

/** The aggregate rows of records (the consumer's grouping and labels). */
export function groupRecords(records: readonly LogRecord[]): HourGroup[] {
  const groups = new Map<string, HourGroup>();
  for (const r of records) {
    const refused = r.usedProvider === null && r.statusCode >= 400;
    const p = r.usedProvider ?? (refused ? REFUSED : r.requestedProvider || "unknown");
    const m = refused ? REFUSED : (r.usedModel ?? r.requestedModel ?? "unknown");
    const s = r.sourceApp ? r.sourceApp : "unknown";
    const id = JSON.stringify([r.projectId, r.apiKeyId, p, m, s]);
    let g = groups.get(id);
    if (!g) {
      g = { o: r.organizationId, pj: r.projectId, k: r.apiKeyId, p, m, s, n: 0, e: 0, ch: 0, pt: 0, ct: 0, rt: 0, cdt: 0, tt: 0, cost: 0n, cr: 0n, byk: 0n, ds: 0n };
      groups.set(id, g);
    }
    if (r.organizationId > g.o) g.o = r.organizationId;
    if (r.kind !== REFUND_KIND) g.n++;
    if (r.statusCode >= 400) g.e++;
    if (r.cached) g.ch++;
    g.pt += r.promptTokens; g.ct += r.completionTokens; g.rt += r.reasoningTokens; g.cdt += r.cachedTokens; g.tt += r.totalTokens;
    g.cost += BigInt(r.costPico); g.cr += BigInt(r.creditsCostPico); g.byk += BigInt(r.byokCostPico); g.ds += BigInt(r.dataStorageCostPico);
  }
  return [...groups.values()];
}

const REBUILD_INSERT_SQL = `INSERT INTO usage_hourly (
  hour_start, organization_id, project_id, api_key_id, provider, model, source_app, requests, errors, cache_hits,
  prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, total_tokens, cost_pico, credits_cost_pico,
  byok_cost_pico, data_storage_cost_pico, updated_at
) SELECT ?2, json_extract(value, '$.o'), json_extract(value, '$.pj'), json_extract(value, '$.k'), json_extract(value, '$.p'),
  json_extract(value, '$.m'), json_extract(value, '$.s'), json_extract(value, '$.n'), json_extract(value, '$.e'), json_extract(value, '$.ch'),
  json_extract(value, '$.pt'), json_extract(value, '$.ct'), json_extract(value, '$.rt'), json_extract(value, '$.cdt'), json_extract(value, '$.tt'),
  CAST(json_extract(value, '$.cost') AS INTEGER), CAST(json_extract(value, '$.cr') AS INTEGER), CAST(json_extract(value, '$.byk') AS INTEGER),
  CAST(json_extract(value, '$.ds') AS INTEGER), ?3
FROM json_each(?1)`;

export interface RebuildResult {
  hour: string;
  organizations: number;
  records: number;
  rows: number;
}

/**
 * Replaces the aggregates of one hour by the sums of its records in R2 (every organization), in one
 * D1 batch. Meant for closed hours: records of the hour still on their way would be counted again
 * by the consumer after the rebuild.
 */
export async function rebuildHour(env: Env, hourStart: number, now = Date.now()): Promise<RebuildResult> {
  const orgs = await organizationsInBucket(env.LOGS_BUCKET);
  const rows: HourGroup[] = [];
  let records = 0;
  let withRecords = 0;
  for (const org of orgs) {
    const list = await hourRecords(env.LOGS_BUCKET, org, hourStart);
    if (list.length === 0) continue;
    withRecords++;
    records += list.length;
    rows.push(...groupRecords(list));
  }
  // Money as decimal strings in JSON (sums may pass 2^53), cast back to INTEGER in SQL.
  const param = JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  await env.DB.batch([
    env.DB.prepare("DELETE FROM usage_hourly WHERE hour_start = ?1").bind(hourStart),
    env.DB.prepare(REBUILD_INSERT_SQL).bind(param, hourStart, now),
  ]);
  return { hour: new Date(hourStart).toISOString(), organizations: withRecords, records, rows: rows.length };
}
