/**
 * The LOGS queue consumer (`queue()` in src/index.ts). A message holds several records
 * (`{ records: [{ row, debit }, ...] }`; a bare `{ row, debit }` from before is one record). For
 * each batch of messages:
 *  1. finds the records not applied yet (`log_applied`, by the hour of the record's start and its
 *     id), and writes them to R2 as one gzip NDJSON object per organization and hour, keyed by a
 *     hash of the record ids it holds (`logs/{org}/{yyyy}/{mm}/{dd}/{hh}/{batch}.ndjson.gz`): the
 *     same records again rewrite the same object;
 *  2. applies them to D1 in ONE batch (a transaction; one per ~1 MB of records): the credit debits,
 *     the hourly aggregates (`usage_hourly`, added to), each key's last use (`key_last_use`), and
 *     the applied ids themselves. Every statement skips the ids already in `log_applied`, so a
 *     batch delivered twice, or a record sent twice by an outbox, is counted once;
 *  3. then, best-effort, the recent window (`request_logs`): a window that cannot be written (a
 *     full database) never holds back billing nor makes the queue redeliver a batch that bills.
 * A failure before the D1 batch commits retries the whole batch (at least once delivery). A record
 * can end up in two objects only when a retry groups it with other records than the first attempt
 * did and the first attempt's D1 batch never committed; readers skip repeated ids (docs/scale.md).
 *
 * Late records (their hour before the dedup horizon, LOG_DEDUP_HOURS, whose applied ids are
 * forgotten) cannot be checked against earlier copies by id and hour. They are deduplicated under
 * the hour they arrive in instead, and their hours' aggregates are rebuilt from R2 (which skips
 * repeated ids) rather than added to: exact whether or not a copy was applied before
 * (docs/scale.md, "Redelivery horizon").
 */
import type { Env } from "../env";
import { LOG_COLUMNS, REFUND_KIND } from "./request-log";
import { batchIdOf, fieldIndex, gzipNdjson, hourPrefix, recordFromRow, type LogRecord } from "./log-record";
import type { LogEntry } from "./log-queue";
import { floorPastDropped, windowHours, windowOn } from "./window";
import { boundaryOf, boundaryStatement, CATCH_UP_COPIED_ID, HOUR_MS, hourStartOf, markOrganizationsStatements, newMarkToken, rebuildMarkedHour, REFUSED, type RecordsBoundary } from "./aggregate";
import { bodyMessageOf, storeBodies } from "./bodies";
import { exportSpans } from "../integrations/otlp";
import { HISTOGRAM_COLUMNS, histogramSums } from "./latency";
import { hedgeSql } from "./hedging";

export const DEFAULT_DEDUP_HOURS = 24;
export const DEFAULT_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;
/**
 * `max_retries` of the LOGS consumer in wrangler.jsonc (scripts/test/queue-config.test.mjs keeps
 * them equal): a message delivered for the (LOGS_MAX_RETRIES + 1)th time goes to the dead-letter
 * queue if it fails again.
 */
export const LOGS_MAX_RETRIES = 10;
/** Records per D1 batch are cut at about this many characters of JSON. */
const D1_CHUNK_CHARS = 1_000_000;

export { DEFAULT_WINDOW_HOURS, windowHours } from "./window";

/**
 * Hours an applied log id is remembered, counted from the hour of the record's start: records of
 * older hours are late (see the module comment).
 */
export function dedupHours(env: Env): number {
  const n = Number((env as unknown as Record<string, unknown>).LOG_DEDUP_HOURS);
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : DEFAULT_DEDUP_HOURS;
}

/** The oldest hour whose applied ids are still known at `now`: records of earlier hours are late. */
export const dedupHorizon = (env: Env, now: number): number => hourStartOf(now) - dedupHours(env) * HOUR_MS;

/** Days raw records are kept in R2. */
export function retentionDays(env: Env): number {
  const n = Number(env.REQUEST_LOG_RETENTION_DAYS);
  return Number.isFinite(n) && n >= 1 ? Math.floor(n) : DEFAULT_RETENTION_DAYS;
}

/** A record as the consumer handles it: the serialized row, its debit, the parsed record and its hour. */
export interface IncomingRecord {
  row: string;
  debit: string;
  record: LogRecord;
  /** The hour of `record.createdAt` (epoch ms). */
  hour: number;
}

/** An entry as a record; null when it is not one (garbage can never become valid: dropped, not retried). */
export function incomingOf(m: LogEntry): IncomingRecord | null {
  let values: unknown;
  try {
    values = JSON.parse(m.row);
  } catch {
    return null;
  }
  if (!Array.isArray(values) || values.length !== LOG_COLUMNS.length || !/^-?\d+$/.test(m.debit)) return null;
  const record = recordFromRow(values);
  const ids = [record.id, record.requestId, record.organizationId, record.projectId, record.apiKeyId];
  if (ids.some((v) => typeof v !== "string" || v === "") || !Number.isSafeInteger(record.createdAt)) return null;
  return { row: m.row, debit: m.debit, record, hour: hourStartOf(record.createdAt) };
}

/** Where a record's applied id is (or will be) in `log_applied`: its own hour, or for a late record the hour it arrives in and the one before. */
function dedupKeys(r: IncomingRecord, horizon: number, now: number): [number, number] {
  return r.hour >= horizon ? [r.hour, r.hour] : [hourStartOf(now), hourStartOf(now) - HOUR_MS];
}

/** A field of the record's whole row (`$.r`, the records bound for the aggregates and the window). */
const at = (f: Parameters<typeof fieldIndex>[0]) => `json_extract(value, '$.r[${fieldIndex(f)}]')`;
/**
 * `$.k` and `$.k2`: the record's dedup hours (`dedupKeys`); a primary-key lookup each. `id`: where
 * the statement's bound records hold the record's id.
 */
const notApplied = (id: string) => `NOT EXISTS (SELECT 1 FROM log_applied WHERE log_applied.hour_start IN (json_extract(value, '$.k'), json_extract(value, '$.k2')) AND log_applied.id = ${id})`;

/**
 * The statements that need only a record's ids, start and debit read them from a short entry per
 * record (`KeysEntry`) instead of its whole row: a bound value is serialized into D1's request and
 * parsed by each statement, and a row is about a kilobyte where these fields are a tenth of it.
 */
const key = (f: "i" | "o" | "ak" | "c" | "d") => `json_extract(value, '$.${f}')`;

const DEBIT_SQL = `UPDATE organizations SET credits_pico = credits_pico - (
  SELECT COALESCE(SUM(CAST(${key("d")} AS INTEGER)), 0) FROM json_each(?1)
  WHERE ${key("o")} = organizations.id AND ${notApplied(key("i"))}
) WHERE id IN (SELECT ${key("o")} FROM json_each(?1) WHERE ${key("d")} <> '0')`;

/**
 * A record's hedged flag and hedge cost, from its routing attempts (src/usage/hedging.ts), over the
 * `rj` column of the rows below: inside the subquery's own json_each a bare `value` would name that
 * json_each's column, not the record's.
 */
const HEDGE = hedgeSql("rj");

const SUMMED = ["requests", "errors", "cache_hits", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens", "total_tokens", "cost_pico", "credits_cost_pico", "byok_cost_pico", "data_storage_cost_pico", ...HISTOGRAM_COLUMNS, "hedged_requests", "hedge_cost_pico"];

/**
 * The hourly grouping and labels (provider/model/app 'unknown'; refused requests under REFUSED), as
 * `groupRecords`. Late records (`$.a` = 0) are left out: their hours are rebuilt from R2.
 */
const AGGREGATE_SQL = `INSERT INTO usage_hourly (
  hour_start, organization_id, project_id, api_key_id, provider, model, source_app, ${SUMMED.join(", ")}, updated_at
)
SELECT h, MAX(o), pj, k, p, m, s, SUM(CASE WHEN kd = '${REFUND_KIND}' THEN 0 ELSE 1 END), SUM(CASE WHEN st >= 400 THEN 1 ELSE 0 END), SUM(CASE WHEN ca THEN 1 ELSE 0 END),
  SUM(pt), SUM(ct), SUM(rt), SUM(cdt), SUM(tt), SUM(cost), SUM(cr), SUM(byk), SUM(ds),
  ${histogramSums({ kind: "kd", status: "st", cached: "ca", latency: "lat", ttft: "ttft" }).join(", ")}, SUM(${HEDGE.hedged}), SUM(${HEDGE.costPico}), ?2
FROM (
  SELECT ${at("createdAt")} - (${at("createdAt")} % ${HOUR_MS}) AS h, ${at("organizationId")} AS o, ${at("projectId")} AS pj,
    ${at("apiKeyId")} AS k, COALESCE(${at("usedProvider")}, CASE WHEN ${at("statusCode")} >= 400 THEN '${REFUSED}' END, NULLIF(${at("requestedProvider")}, ''), 'unknown') AS p,
    CASE WHEN ${at("usedProvider")} IS NULL AND ${at("statusCode")} >= 400 THEN '${REFUSED}' ELSE COALESCE(${at("usedModel")}, ${at("requestedModel")}, 'unknown') END AS m,
    CASE WHEN ${at("sourceApp")} IS NULL OR ${at("sourceApp")} = '' THEN 'unknown' ELSE ${at("sourceApp")} END AS s,
    ${at("kind")} AS kd, ${at("statusCode")} AS st, ${at("cached")} AS ca, ${at("promptTokens")} AS pt, ${at("completionTokens")} AS ct,
    ${at("reasoningTokens")} AS rt, ${at("cachedTokens")} AS cdt, ${at("totalTokens")} AS tt, ${at("costPico")} AS cost,
    ${at("creditsCostPico")} AS cr, ${at("byokCostPico")} AS byk, ${at("dataStorageCostPico")} AS ds,
    ${at("latencyMs")} AS lat, ${at("ttftMs")} AS ttft, ${at("routing")} AS rj
  FROM json_each(?1) WHERE json_extract(value, '$.a') = 1 AND ${notApplied(at("id"))}
) WHERE 1
GROUP BY h, pj, k, p, m, s
ON CONFLICT (hour_start, project_id, api_key_id, provider, model, source_app) DO UPDATE SET
  ${SUMMED.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}, updated_at = excluded.updated_at`;

/** The recent window: rows newer than ?2 (a row already there, e.g. a video job, is left alone). */
const WINDOW_SQL = `INSERT OR IGNORE INTO request_logs (${LOG_COLUMNS.join(", ")})
SELECT ${LOG_COLUMNS.map((_, i) => `json_extract(value, '$.r[${i}]')`).join(", ")} FROM json_each(?1)
WHERE ${at("createdAt")} >= ?2 AND ${at("kind")} <> '${REFUND_KIND}'`;

const LAST_USE_SQL = `INSERT INTO key_last_use (api_key_id, organization_id, last_used_at)
SELECT ${key("ak")} AS k, ${key("o")} AS o, MAX(${key("c")}) FROM json_each(?1) WHERE 1 GROUP BY k, o
ON CONFLICT (api_key_id, organization_id) DO UPDATE SET last_used_at = MAX(last_used_at, excluded.last_used_at)`;

const APPLIED_SQL = `INSERT OR IGNORE INTO log_applied (hour_start, id) SELECT json_extract(value, '$.k'), ${key("i")} FROM json_each(?1)`;

/** What the debit, last-use and applied-id statements read of a record (`key`). */
interface KeysEntry {
  i: string;
  o: string;
  ak: string;
  c: number;
  d: string;
  k: number;
  k2: number;
}

/**
 * Statements of one application, in order (the applied ids last). Two bound JSON values for all
 * records: whole rows for the aggregates, short entries for the rest. The window is not among them
 * (`windowStatement`): billing never waits on it.
 */
export function applyStatements(env: Env, records: readonly IncomingRecord[], now: number, boundary: RecordsBoundary): D1PreparedStatement[] {
  const horizon = dedupHorizon(env, now);
  const rows: string[] = [];
  const keys: string[] = [];
  for (const r of records) {
    const [k, k2] = dedupKeys(r, horizon, now);
    const { id, organizationId, apiKeyId, createdAt } = r.record;
    rows.push(`{"r":${r.row},"k":${k},"k2":${k2},"a":${rebuilt(env, r, horizon, now, boundary) ? 0 : 1}}`);
    keys.push(JSON.stringify({ i: id, o: organizationId, ak: apiKeyId, c: createdAt, d: r.debit, k, k2 } satisfies KeysEntry));
  }
  const whole = `[${rows.join(",")}]`;
  const short = `[${keys.join(",")}]`;
  const db = env.DB;
  const out = [db.prepare(DEBIT_SQL).bind(short), db.prepare(AGGREGATE_SQL).bind(whole, now), db.prepare(LAST_USE_SQL).bind(short), db.prepare(APPLIED_SQL).bind(short)];
  // Late records' hours are marked for a rebuild in the same transaction (their R2 objects are
  // written already): the rebuild that commits holds them (src/usage/aggregate.ts, marks). Per
  // organization: the rebuild reads only the objects of the organizations whose records came late.
  const late = lateHours(records.filter((r) => rebuilt(env, r, horizon, now, boundary)));
  if (late.length > 0) out.push(...markOrganizationsStatements(db, late, newMarkToken()));
  return out;
}

/**
 * The window rows of records just applied (null: the window is off). Run after their application
 * committed, on its own: a window that cannot be written (a full database) must not stop debits
 * and aggregates, and every record is in R2 already, where the request log reads past the window.
 */
export function windowStatement(env: Env, records: readonly IncomingRecord[], now: number): D1PreparedStatement | null {
  if (!windowOn(env) || records.length === 0) return null;
  return env.DB.prepare(WINDOW_SQL).bind(`[${records.map((r) => `{"r":${r.row}}`).join(",")}]`, now - windowHours(env) * HOUR_MS);
}

/** Attempts at a window insert before its rows are dropped (they stay in R2). */
const WINDOW_ATTEMPTS = 2;

/**
 * Best-effort window insert: retried once, then dropped with an error log. Never throws: the
 * records are billed and counted already, and a redelivery would find them applied and skip them.
 */
export async function writeWindow(env: Env, records: readonly IncomingRecord[], now: number): Promise<boolean> {
  const stmt = windowStatement(env, records, now);
  if (!stmt) return true;
  for (let attempt = 1; ; attempt++) {
    try {
      // A batch of one, like the application: D1 meters it the same way.
      await env.DB.batch([stmt]);
      return true;
    } catch (err) {
      if (attempt >= WINDOW_ATTEMPTS) {
        console.error(`request window: ${records.length} rows not written (kept in R2)`, err instanceof Error ? err.message : String(err));
        await floorPastDropped(env, records.map((r) => r.record));
        return false;
      }
    }
  }
}

/** A late record's rebuild: its hour, of its organization only. */
export interface LateHour {
  hour: number;
  organizationId: string;
}

/** The (hour, organization) pairs of records, each once, oldest hour first. */
function lateHours(records: readonly IncomingRecord[]): LateHour[] {
  const pairs = new Map<string, LateHour>();
  for (const r of records) pairs.set(`${r.hour}:${r.record.organizationId}`, { hour: r.hour, organizationId: r.record.organizationId });
  return [...pairs.values()].sort((a, b) => a.hour - b.hour || (a.organizationId < b.organizationId ? -1 : 1));
}

/**
 * The first hour whose records are all in R2 at `now`: not past R2's retention, not before the
 * upgrade from the path before the queue (`RecordsBoundary`); null: no hour (the upgrade's copy
 * step has not run yet).
 */
export function firstRebuildableHour(env: Env, now: number, boundary: RecordsBoundary): number | null {
  return boundary.rebuildFrom === null ? null : Math.max(boundary.rebuildFrom, hourStartOf(now - retentionDays(env) * DAY_MS));
}

/**
 * A late record whose hour is rebuilt from R2 instead of added to. An hour whose records are not
 * all in R2 (past R2's retention, or aggregated by the path before the queue) would lose them in
 * a rebuild: its late record is added like any other.
 */
function rebuilt(env: Env, r: IncomingRecord, horizon: number, now: number, boundary: RecordsBoundary): boolean {
  const first = firstRebuildableHour(env, now, boundary);
  return r.hour < horizon && first !== null && r.hour >= first;
}

/**
 * The records already applied, by their dedup keys (one bound JSON value), and the records'
 * boundary (read alongside). Applied too: a record the path before the queue inserted into
 * `request_logs` itself (with its debit, in one D1 batch) and an outbox that crashed before
 * deleting it sends again after the upgrade. Looked up there: records created before the
 * upgrade's copy step (`RecordsBoundary.oldBefore`; any time until it ran), and late records (a
 * row the window still holds was applied with its forgotten id); never video jobs or refunds:
 * since the upgrade only the consumer inserts other rows (with their applied ids), but a video
 * job's row is inserted before its record is sent.
 */
async function appliedIds(env: Env, records: readonly IncomingRecord[], horizon: number, now: number): Promise<{ done: Set<string>; boundary: RecordsBoundary }> {
  const pairs = records.flatMap((r) => {
    const [k, k2] = dedupKeys(r, horizon, now);
    return k === k2 ? [[k, r.record.id]] : [[k, r.record.id], [k2, r.record.id]];
  });
  const maybeOld = records.filter((r) => r.record.kind !== "video" && r.record.kind !== REFUND_KIND).map((r) => [r.record.id, r.record.createdAt, r.hour < horizon ? 1 : 0]);
  const [state, res] = await Promise.all([
    boundaryStatement(env.DB).all<{ id: string; a: number; u: number }>(),
    env.DB.prepare(
      `SELECT a.id FROM json_each(?1) j JOIN log_applied a ON a.hour_start = json_extract(j.value, '$[0]') AND a.id = json_extract(j.value, '$[1]')
       UNION SELECT r.id FROM json_each(?2) j JOIN request_logs r ON r.id = json_extract(j.value, '$[0]')
       WHERE json_extract(j.value, '$[2]') = 1 OR json_extract(j.value, '$[1]') < COALESCE((SELECT updated_at FROM aggregation_state WHERE id = ?3), ${Number.MAX_SAFE_INTEGER})`,
    ).bind(JSON.stringify(pairs), JSON.stringify(maybeOld), CATCH_UP_COPIED_ID).all<{ id: string }>(),
  ]);
  return { done: new Set(res.results.map((r) => r.id)), boundary: boundaryOf(state.results) };
}

/** One object per organization and hour; its key is a hash of the ids it holds. */
export async function writeObjects(env: Env, records: readonly LogRecord[]): Promise<string[]> {
  const groups = new Map<string, LogRecord[]>();
  for (const r of records) {
    const prefix = hourPrefix(r.organizationId, hourStartOf(r.createdAt));
    const list = groups.get(prefix) ?? [];
    list.push(r);
    groups.set(prefix, list);
  }
  const keys: string[] = [];
  await Promise.all(
    [...groups].map(async ([prefix, list]) => {
      list.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
      const key = `${prefix}${await batchIdOf(list.map((r) => r.id))}.ndjson.gz`;
      await env.LOGS_BUCKET.put(key, await gzipNdjson(list), { httpMetadata: { contentType: "application/x-ndjson", contentEncoding: "gzip" }, customMetadata: { records: String(list.length) } });
      keys.push(key);
    }),
  );
  return keys;
}

/**
 * Applies records (R2, then D1), then rebuilds the hours of late records; idempotent. Throws when
 * a store fails: the caller retries the batch. Returns how many records were new.
 */
export async function applyLogRecords(env: Env, incoming: readonly IncomingRecord[], now = Date.now()): Promise<number> {
  const { fresh, rebuilds } = await storeLogRecords(env, incoming, now);
  // Also the hours of late records an earlier delivery stored but did not rebuild (still marked).
  for (const late of rebuilds) await rebuildMarkedHour(env, late.hour, now, late.organizationId);
  return fresh;
}

/** The first step of `applyLogRecords`: R2, then D1 (late records' hours marked). Returns the new records' count and the late hours to rebuild (per organization). */
export async function storeLogRecords(env: Env, incoming: readonly IncomingRecord[], now: number): Promise<{ fresh: number; rebuilds: LateHour[] }> {
  // The same record twice in a batch (an outbox that sent it again) counts once.
  const unique = new Map<string, IncomingRecord>();
  for (const r of incoming) if (!unique.has(r.record.id)) unique.set(r.record.id, r);
  if (unique.size === 0) return { fresh: 0, rebuilds: [] };
  const horizon = dedupHorizon(env, now);
  const { done, boundary } = await appliedIds(env, [...unique.values()], horizon, now);
  const fresh = [...unique.values()].filter((r) => !done.has(r.record.id));
  // Late records' hours are rebuilt from R2 after the D1 batch that marks them.
  const rebuilds = lateHours([...unique.values()].filter((r) => rebuilt(env, r, horizon, now, boundary)));
  if (rebuilds.length > 0) console.warn("log records older than the dedup horizon; their hours are rebuilt from R2", rebuilds.map((l) => `${new Date(l.hour).toISOString()} ${l.organizationId}`).join(", "));
  if (fresh.length > 0) await writeObjects(env, fresh.map((r) => r.record));
  if (fresh.length > 0) await applyFresh(env, fresh, now, boundary);
  // Each record once, after it is applied, to the organizations' OpenTelemetry collectors (never throws).
  if (fresh.length > 0) await exportSpans(env, fresh.map((r) => r.record));
  return { fresh: fresh.length, rebuilds };
}

/** D1 batches of ~1 MB of records (D1 caps a bound value at 2 MB); each is idempotent alone. */
async function applyFresh(env: Env, fresh: readonly IncomingRecord[], now: number, boundary: RecordsBoundary): Promise<void> {
  let chunk: IncomingRecord[] = [];
  let size = 0;
  for (const r of fresh) {
    if (chunk.length > 0 && size + r.row.length > D1_CHUNK_CHARS) {
      await env.DB.batch(applyStatements(env, chunk, now, boundary));
      await writeWindow(env, chunk, now);
      chunk = [];
      size = 0;
    }
    chunk.push(r);
    size += r.row.length;
  }
  await env.DB.batch(applyStatements(env, chunk, now, boundary));
  await writeWindow(env, chunk, now);
}

/** The records of a message body (several, or one bare record from before messages held several); null when it is neither. */
function entriesOf(body: unknown): unknown[] | null {
  if (body === null || typeof body !== "object") return null;
  const records = (body as { records?: unknown }).records;
  if (Array.isArray(records)) return records;
  return "row" in body ? [body] : null;
}

/** One record of a message, or null when it is not one. */
function parseEntry(e: unknown): IncomingRecord | null {
  const entry = e as Partial<LogEntry> | null;
  return entry && typeof entry === "object" && typeof entry.row === "string" && typeof entry.debit === "string" ? incomingOf({ row: entry.row, debit: entry.debit }) : null;
}

/** The Worker's queue() handler: one application per batch; a failure retries the batch. */
export async function consumeLogBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const incoming: IncomingRecord[] = [];
  const bodies: Array<NonNullable<ReturnType<typeof bodyMessageOf>> & { last: boolean }> = [];
  for (const m of batch.messages) {
    // Request bodies (projects with logBodies) ride the same queue: to R2, never D1.
    const kept = bodyMessageOf(m.body);
    if (kept) {
      bodies.push({ ...kept, last: m.attempts > LOGS_MAX_RETRIES });
      continue;
    }
    const entries = entriesOf(m.body);
    if (!entries) {
      // Not a record (nothing else sends here): dropped loudly rather than retried forever.
      console.error("log queue: malformed message dropped", m.id);
      m.ack();
      continue;
    }
    entries.forEach((e, i) => {
      const parsed = parseEntry(e);
      // Garbage never becomes valid: dropped loudly; the message's other records are applied.
      if (parsed) incoming.push(parsed);
      else console.error("log queue: malformed record dropped", m.id, i);
    });
  }
  try {
    // Bodies first: the spans exported while the records are applied read them (src/integrations/otlp.ts).
    // Bodies failing on their last delivery are marked dropped, so readers need not wait a day to say so.
    if (bodies.length > 0) await storeBodies(env, bodies);
    await applyLogRecords(env, incoming);
  } catch (err) {
    console.error("log batch not applied; retried", err instanceof Error ? err.message : String(err));
    throw err;
  }
  batch.ackAll();
}
