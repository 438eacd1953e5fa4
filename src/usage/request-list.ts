/**
 * Single requests for the dashboard's request log (newest first, filtered, paged by a cursor):
 * from the D1 window (`request_logs`) when the period lies inside it (after the organization's
 * window start: hours and rows bound the window, src/usage/window.ts), else from the R2 hour
 * objects (src/usage/log-export.ts), paging back hour by hour. Scope: the project; developers only
 * their own keys (including inactive ones), as analytics.
 */
import type { Env } from "../env";
import { HOUR_MS } from "./aggregate";
import { windowStart } from "./window";
import { REFUND_KIND } from "./request-log";
import { recordFromDbRow, hourPrefix, readNdjsonGz, type LogRecord } from "./log-record";
import { recordsByHourDesc, type LogScope } from "./log-export";
import { traceOf } from "./conversation";
import { BODIES_SETTLED_MS, keptBodies, keptSql } from "./bodies";

export const PAGE_SIZE = 50;
/** Hours of R2 objects one page reads at most before it answers (the next page goes on). */
const MAX_HOURS_PER_PAGE = 48;

export interface RequestFilters {
  keyId?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
  /** `ok` (< 400), `error` (>= 400) or one status code. */
  status?: string | undefined;
  /** The app id (src/usage/source-app.ts). */
  app?: string | undefined;
  /** A platform end user (`end_user_id`) or the body's `user` field. */
  endUser?: string | undefined;
  /**
   * Only requests whose prompt and answer were kept (true) or not (false). Kept: the record says so
   * and its bodies were stored, or are pending (src/usage/bodies.ts `keptSql`), as `bodiesStatus` says.
   */
  hasBody?: boolean | undefined;
  from: number;
  to: number;
}

/** `before` cursor: createdAt and id of the last row shown (exclusive). */
export interface Cursor {
  at: number;
  id: string;
}

export interface RequestPage {
  rows: LogRecord[];
  next: Cursor | null;
  source: "window" | "archive";
}

/** The group a record's bodies left with and its place there (src/usage/body-batch.ts), when it names them. */
const groupOf = (r: LogRecord): string | null => (typeof r.extra?.bodyBatch === "string" ? r.extra.bodyBatch : null);
const placeOf = (r: LogRecord): number | null => (Number.isSafeInteger(r.extra?.bodyIndex) ? (r.extra!.bodyIndex as number) : null);

/** `kept`: the ids of these records whose bodies are kept (read only when the filter asks about bodies). */
function matches(f: RequestFilters, r: LogRecord, kept: ReadonlySet<string>): boolean {
  if (r.kind === REFUND_KIND) return false;
  if (f.keyId && r.apiKeyId !== f.keyId) return false;
  if (f.model && (r.usedModel ?? r.requestedModel) !== f.model) return false;
  if (f.provider && (r.usedProvider ?? r.requestedProvider ?? "unknown") !== f.provider) return false;
  if (f.app && (r.sourceApp || "unknown") !== f.app) return false;
  const t = traceOf(r);
  if (f.endUser && r.endUserId !== f.endUser && t.user !== f.endUser) return false;
  if (f.hasBody !== undefined && (t.bodies === true && kept.has(r.id)) !== f.hasBody) return false;
  if (f.status === "ok") return r.statusCode < 400;
  if (f.status === "error") return r.statusCode >= 400;
  if (f.status && /^\d{3}$/.test(f.status)) return r.statusCode === Number(f.status);
  return true;
}

const before = (r: LogRecord, c: Cursor | null): boolean => c === null || r.createdAt < c.at || (r.createdAt === c.at && r.id < c.id);

/** Builds the D1 query of one page of the window. */
async function fromWindow(env: Env, scope: LogScope, f: RequestFilters, cursor: Cursor | null, memberId: string | null, now: number): Promise<RequestPage> {
  const where = ["organization_id = ?1", "project_id = ?2", "created_at >= ?3", "created_at < ?4"];
  const params: Array<string | number> = [scope.organizationId, scope.projectId ?? "", f.from, f.to];
  const add = (clause: (n: number) => string, v: string | number) => {
    params.push(v);
    where.push(clause(params.length));
  };
  if (cursor) {
    params.push(cursor.at, cursor.id);
    where.push(`(created_at < ?${params.length - 1} OR (created_at = ?${params.length - 1} AND id < ?${params.length}))`);
  }
  if (f.keyId) add((n) => `api_key_id = ?${n}`, f.keyId);
  if (f.model) add((n) => `COALESCE(used_model, requested_model) = ?${n}`, f.model);
  if (f.provider) add((n) => `COALESCE(used_provider, requested_provider, 'unknown') = ?${n}`, f.provider);
  if (f.app) add((n) => `source_app = ?${n}`, f.app);
  if (f.endUser) add((n) => `(end_user_id = ?${n} OR json_extract(extra, '$.user') = ?${n})`, f.endUser);
  if (f.hasBody !== undefined) {
    params.push(now - BODIES_SETTLED_MS);
    const kept = keptSql({ id: "request_logs.id", batch: "json_extract(request_logs.extra, '$.bodyBatch')", index: "json_extract(request_logs.extra, '$.bodyIndex')", createdAt: "request_logs.created_at" }, `?${params.length}`);
    where.push(f.hasBody ? `json_extract(extra, '$.bodies') = 1 AND ${kept}` : `(json_extract(extra, '$.bodies') IS NOT 1 OR NOT ${kept})`);
  }
  if (f.status === "ok") where.push("status_code < 400");
  else if (f.status === "error") where.push("status_code >= 400");
  else if (f.status && /^\d{3}$/.test(f.status)) add((n) => `status_code = ?${n}`, Number(f.status));
  if (memberId) add((n) => `api_key_id IN (SELECT id FROM api_keys WHERE project_id = ?2 AND created_by = ?${n})`, memberId);
  const res = await env.DB.prepare(`SELECT * FROM request_logs WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ${PAGE_SIZE + 1}`)
    .bind(...params)
    .all<Record<string, unknown>>();
  const rows = res.results.map(recordFromDbRow);
  const more = rows.length > PAGE_SIZE;
  const shown = rows.slice(0, PAGE_SIZE);
  const last = shown[shown.length - 1];
  return { rows: shown, next: more && last ? { at: last.createdAt, id: last.id } : null, source: "window" };
}

/** One page read from the R2 hour objects, newest first. */
async function fromArchive(env: Env, scope: LogScope, f: RequestFilters, cursor: Cursor | null, now: number): Promise<RequestPage> {
  const rows: LogRecord[] = [];
  const end = cursor ? Math.min(f.to, cursor.at + 1) : f.to;
  let hours = 0;
  let scannedTo = end;
  for await (const hour of recordsByHourDesc(env, scope, f.from, end)) {
    const withBodies = f.hasBody === undefined ? [] : hour.filter((r) => traceOf(r).bodies === true).map((r) => ({ id: r.id, batch: groupOf(r), index: placeOf(r), createdAt: r.createdAt }));
    const kept = await keptBodies(env, scope.organizationId, withBodies, now);
    for (const r of hour) if (before(r, cursor) && matches(f, r, kept)) rows.push(r);
    scannedTo = hour.length ? Math.min(scannedTo, hour[hour.length - 1]!.createdAt) : scannedTo;
    if (rows.length > PAGE_SIZE || ++hours >= MAX_HOURS_PER_PAGE) break;
  }
  const shown = rows.slice(0, PAGE_SIZE);
  const last = shown[shown.length - 1];
  const more = rows.length > PAGE_SIZE || (hours >= MAX_HOURS_PER_PAGE && scannedTo > f.from);
  return { rows: shown, next: more ? (last ? { at: last.createdAt, id: last.id } : { at: scannedTo, id: "" }) : null, source: "archive" };
}

/** One page of requests. `memberId`: a developer's scope (only keys they created). */
export async function listRequests(env: Env, scope: LogScope & { projectId: string }, f: RequestFilters, cursor: Cursor | null, memberId: string | null, now = Date.now()): Promise<RequestPage> {
  // The window holds every record from its start on (bounded by hours and rows, shrunk by the size
  // watch, past dropped rows: src/usage/window.ts); R2 holds everything, so what lies before the
  // start is read there.
  const start = await windowStart(env, scope.organizationId, now);
  const upper = cursor ? cursor.at + 1 : f.to;
  if (start === null || upper <= start) return fromArchive(env, scope, f, cursor, now);
  const recent = await fromWindow(env, scope, { ...f, from: Math.max(f.from, start) }, cursor, memberId, now);
  if (recent.next || f.from >= start) return recent;
  // The window ran out before the period did: the page goes on in R2, before the window start.
  const older = await fromArchive(env, scope, { ...f, to: start }, null, now);
  const rows = [...recent.rows, ...older.rows];
  const shown = rows.slice(0, PAGE_SIZE);
  const last = shown[shown.length - 1];
  const next = rows.length > PAGE_SIZE && last ? { at: last.createdAt, id: last.id } : rows.length > PAGE_SIZE ? null : older.next;
  return { rows: shown, next, source: older.rows.length > 0 ? "archive" : "window" };
}

/** One request by id: the window, else its hour's objects in R2 (`at`: the request's time, from the list). */
export async function findRequest(env: Env, scope: LogScope, id: string, at: number | null): Promise<LogRecord | null> {
  const row = await env.DB.prepare("SELECT * FROM request_logs WHERE id = ?1 AND organization_id = ?2").bind(id, scope.organizationId).first<Record<string, unknown>>();
  const inScope = (r: LogRecord) => (scope.projectId === undefined || r.projectId === scope.projectId) && (scope.keyIds === undefined || scope.keyIds.has(r.apiKeyId));
  if (row) {
    const r = recordFromDbRow(row);
    return inScope(r) ? r : null;
  }
  if (at === null || !Number.isFinite(at)) return null;
  const prefix = hourPrefix(scope.organizationId, at - (at % HOUR_MS));
  const list = await env.LOGS_BUCKET.list({ prefix });
  for (const o of list.objects) {
    const obj = await env.LOGS_BUCKET.get(o.key);
    if (!obj) continue;
    const found = (await readNdjsonGz(obj.body)).find((r) => r.id === id);
    if (found) return found.organizationId === scope.organizationId && inScope(found) ? found : null;
  }
  return null;
}
