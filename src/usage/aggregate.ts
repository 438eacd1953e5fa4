/**
 * Hourly aggregates (`usage_hourly`; spec 2.8: analytics read only these). The LOGS queue consumer
 * adds every batch of request records to them, exactly once per record (src/usage/log-consumer.ts).
 * This module keeps the hours' bookkeeping and can recompute an hour from the raw records:
 *  - the cron (every minute) CLOSES hours: `aggregation_state.aggregatedUntil` moves to the start
 *    of the last hour that ended more than FINAL_GRACE_MS ago (records are sent after long
 *    streams and batched; `created_at` is the request's start), and `updatedAt` says when the
 *    aggregates were last known current (analytics report it);
 *  - `rebuildHour` (POST /v1/admin/usage/rebuild?hour=) replaces one closed hour's aggregates by
 *    the sums of its records in R2, so aggregates can always be recomputed from the raw records;
 *    every rebuild goes through the hour's mark (compare-and-clear, below), so concurrent rebuilds
 *    and late records of the hour never lose a record.
 */
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import type { Db } from "../db/client";
import { aggregationState } from "../db/schema";
import { hourPrefix, organizationsInBucket, readNdjsonGz, type LogRecord } from "./log-record";
import { REFUND_KIND } from "./request-log";
import { addToHistograms, BUCKETS, emptyHistogram, HISTOGRAM_COLUMNS } from "./latency";
import { hedgeOf } from "./hedging";

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
  /** Latency and TTFT histograms (src/usage/latency.ts). */
  lb: number[]; tb: number[];
  /** Hedged requests and their hedge cost (src/usage/hedging.ts). */
  hg: number; hc: bigint;
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
      g = { o: r.organizationId, pj: r.projectId, k: r.apiKeyId, p, m, s, n: 0, e: 0, ch: 0, pt: 0, ct: 0, rt: 0, cdt: 0, tt: 0, cost: 0n, cr: 0n, byk: 0n, ds: 0n, lb: emptyHistogram(), tb: emptyHistogram(), hg: 0, hc: 0n };
      groups.set(id, g);
    }
    if (r.organizationId > g.o) g.o = r.organizationId;
    if (r.kind !== REFUND_KIND) g.n++;
    if (r.statusCode >= 400) g.e++;
    if (r.cached) g.ch++;
    g.pt += r.promptTokens; g.ct += r.completionTokens; g.rt += r.reasoningTokens; g.cdt += r.cachedTokens; g.tt += r.totalTokens;
    g.cost += BigInt(r.costPico); g.cr += BigInt(r.creditsCostPico); g.byk += BigInt(r.byokCostPico); g.ds += BigInt(r.dataStorageCostPico);
    addToHistograms(g.lb, g.tb, r);
    const hedge = hedgeOf(r.routing);
    g.hg += hedge.hedged;
    g.hc += hedge.costPico;
  }
  return [...groups.values()];
}

const REBUILD_INSERT_SQL = `INSERT INTO usage_hourly (
  hour_start, organization_id, project_id, api_key_id, provider, model, source_app, requests, errors, cache_hits,
  prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, total_tokens, cost_pico, credits_cost_pico,
  byok_cost_pico, data_storage_cost_pico, ${HISTOGRAM_COLUMNS.join(", ")}, hedged_requests, hedge_cost_pico, updated_at
) SELECT ?2, json_extract(value, '$.o'), json_extract(value, '$.pj'), json_extract(value, '$.k'), json_extract(value, '$.p'),
  json_extract(value, '$.m'), json_extract(value, '$.s'), json_extract(value, '$.n'), json_extract(value, '$.e'), json_extract(value, '$.ch'),
  json_extract(value, '$.pt'), json_extract(value, '$.ct'), json_extract(value, '$.rt'), json_extract(value, '$.cdt'), json_extract(value, '$.tt'),
  CAST(json_extract(value, '$.cost') AS INTEGER), CAST(json_extract(value, '$.cr') AS INTEGER), CAST(json_extract(value, '$.byk') AS INTEGER),
  CAST(json_extract(value, '$.ds') AS INTEGER),
  ${[...Array(BUCKETS).keys()].map((i) => `json_extract(value, '$.lb[${i}]')`).join(", ")},
  ${[...Array(BUCKETS).keys()].map((i) => `json_extract(value, '$.tb[${i}]')`).join(", ")},
  json_extract(value, '$.hg'), CAST(json_extract(value, '$.hc') AS INTEGER), ?3
FROM json_each(?1)`;

export interface RebuildResult {
  hour: string;
  organizations: number;
  records: number;
  rows: number;
}

// Rebuilds go through a mark per hour (docs/scale.md, "Rebuilds are exact"): an `aggregation_state`
// row `rebuild:<hour ms>` whose `updated_at` is a token, a random number every writer replaces.
// Whoever needs an hour rebuilt (a late record, in the same D1 batch as its applied id, after its
// R2 write; the admin route; the upgrade's catch-up) sets the mark; a rebuild reads the token, then
// R2, and commits only if the token is still the one it read (clearing the mark in the same batch).
// A commit therefore holds every record whose mark came before its R2 read; a record marked after
// it changed the token, and the rebuild reads again. A random token, not a counter: a mark cleared
// and set again never comes back with the value a stale reader holds.

/** The mark's row id: the whole hour, or one organization's records of it (late records mark those). */
const markId = (hour: number, organizationId: string | null = null) => (organizationId === null ? `rebuild:${hour}` : `rebuild:${hour}:${organizationId}`);
/** Marks are `rebuild:<epoch ms>`; the cron looks for these. */
const MARK_PREFIX = "rebuild:";
/** A new token (a safe integer; 2^53 values). */
export const newMarkToken = (): number => {
  const [a, b] = crypto.getRandomValues(new Uint32Array(2));
  return (a! % 0x200000) * 0x100000000 + b!;
};

/** Sets the mark of each hour to `token` (one statement; hours as one bound JSON value). */
export function markStatement(db: D1Database, hours: readonly number[], token: number): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO aggregation_state (id, aggregated_until, updated_at) SELECT '${MARK_PREFIX}' || value, value, ?2 FROM json_each(?1) WHERE 1
       ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at`,
    )
    .bind(JSON.stringify(hours), token);
}

/**
 * Marks organizations' hours (pairs of hour and organization id, one bound JSON value): a late
 * record's rebuild reads only its organization's objects. A whole-hour mark of the same hour gets
 * the new token too, so a whole-hour rebuild that read R2 before these records cannot commit.
 */
export function markOrganizationsStatements(db: D1Database, marks: ReadonlyArray<{ hour: number; organizationId: string }>, token: number): D1PreparedStatement[] {
  const pairs = JSON.stringify(marks.map((m) => [m.hour, m.organizationId]));
  return [
    db
      .prepare(
        `INSERT INTO aggregation_state (id, aggregated_until, updated_at)
         SELECT '${MARK_PREFIX}' || json_extract(value, '$[0]') || ':' || json_extract(value, '$[1]'), json_extract(value, '$[0]'), ?2 FROM json_each(?1) WHERE 1
         ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at`,
      )
      .bind(pairs, token),
    db.prepare(`UPDATE aggregation_state SET updated_at = ?2 WHERE id IN (SELECT '${MARK_PREFIX}' || json_extract(value, '$[0]') FROM json_each(?1))`).bind(pairs, token),
  ];
}

/** A rebuild's read: the mark's token as read before R2 (null: no mark) and the hour's sums. */
export interface HourRead {
  hour: number;
  /** One organization's records of the hour, or null: every organization's. */
  organizationId: string | null;
  token: number | null;
  groups: HourGroup[];
  organizations: number;
  records: number;
}

/**
 * Reads the hour's mark, then its records in R2 (every organization, or only `organizationId`'s
 * objects; none when unmarked, unless `always`).
 */
export async function readHour(env: Env, hour: number, always = false, organizationId: string | null = null): Promise<HourRead> {
  const mark = await env.DB.prepare("SELECT updated_at AS t FROM aggregation_state WHERE id = ?1").bind(markId(hour, organizationId)).first<{ t: number }>();
  const groups: HourGroup[] = [];
  let records = 0;
  let organizations = 0;
  if (!mark && !always) return { hour, organizationId, token: null, groups, organizations, records };
  for (const org of organizationId === null ? await organizationsInBucket(env.LOGS_BUCKET) : [organizationId]) {
    const list = await hourRecords(env.LOGS_BUCKET, org, hour);
    if (list.length === 0) continue;
    organizations++;
    records += list.length;
    groups.push(...groupRecords(list));
  }
  return { hour, organizationId, token: mark?.t ?? null, groups, organizations, records };
}

/**
 * Replaces the hour's aggregates by the sums read, in one D1 batch, if its mark still holds the
 * token read (and clears it). False: the mark changed (or was cleared) since the read.
 */
export async function commitHour(env: Env, read: HourRead, now: number): Promise<boolean> {
  if (read.token === null) return false;
  const db = env.DB;
  const marked = (id: string, token: string) => `EXISTS (SELECT 1 FROM aggregation_state WHERE id = ${id} AND updated_at = ${token})`;
  const id = markId(read.hour, read.organizationId);
  // Money as decimal strings in JSON (sums may pass 2^53), cast back to INTEGER in SQL.
  const param = JSON.stringify(read.groups, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  const res = await db.batch([
    db.prepare(`DELETE FROM usage_hourly WHERE hour_start = ?1 AND (?4 IS NULL OR organization_id = ?4) AND ${marked("?2", "?3")}`).bind(read.hour, id, read.token, read.organizationId),
    db.prepare(`${REBUILD_INSERT_SQL} WHERE ${marked("?4", "?5")}`).bind(param, read.hour, now, id, read.token),
    db.prepare("DELETE FROM aggregation_state WHERE id = ?1 AND updated_at = ?2").bind(id, read.token),
  ]);
  return (res[2]!.meta.changes ?? 0) > 0;
}

/** Reads after a lost commit before leaving the hour to the cron (`rebuildMarkedHours`). */
const REBUILD_ATTEMPTS = 5;

/**
 * Rebuilds a marked hour until a commit holds or the mark is gone (another rebuild that read after
 * it committed). Null when the hour had no mark.
 */
export async function rebuildMarkedHour(env: Env, hour: number, now: number, organizationId: string | null = null): Promise<RebuildResult | null> {
  let last: HourRead | null = null;
  for (let i = 0; i < REBUILD_ATTEMPTS; i++) {
    const read = await readHour(env, hour, false, organizationId);
    if (read.token === null) break;
    last = read;
    if (await commitHour(env, read, now)) break;
  }
  return last && { hour: new Date(hour).toISOString(), organizations: last.organizations, records: last.records, rows: last.groups.length };
}

/**
 * Replaces the aggregates of one hour by the sums of its records in R2 (every organization): marks
 * the hour, then rebuilds it. Meant for closed hours whose records are all in R2
 * (`RecordsBoundary`): records of the hour still on their way would be counted again by the
 * consumer after the rebuild.
 */
export async function rebuildHour(env: Env, hourStart: number, now = Date.now()): Promise<RebuildResult> {
  await markStatement(env.DB, [hourStart], newMarkToken()).run();
  const done = await rebuildMarkedHour(env, hourStart, now);
  if (done) return done;
  // Rebuilt by another rebuild that read after our mark: the figures as R2 has them now.
  const read = await readHour(env, hourStart, true);
  return { hour: new Date(hourStart).toISOString(), organizations: read.organizations, records: read.records, rows: read.groups.length };
}

/** Cron: rebuilds the hours still marked (a consumer or a rebuild that stopped after marking). */
export async function rebuildMarkedHours(env: Env, now: number, limit = 6): Promise<number> {
  const marks = await env.DB.prepare("SELECT id, aggregated_until AS h FROM aggregation_state WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3")
    .bind(MARK_PREFIX, `${MARK_PREFIX.slice(0, -1)};`, limit)
    .all<{ id: string; h: number }>();
  for (const m of marks.results) {
    const org = m.id.slice(markId(m.h).length + 1);
    await rebuildMarkedHour(env, m.h, now, org === "" ? null : org);
  }
  return marks.results.length;
}
