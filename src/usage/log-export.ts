/**
 * Reading request records back: a period of an organization's records, hour by hour, from R2
 * (`logs/{org}/{yyyy}/{mm}/{dd}/{hh}/*.ndjson.gz`) merged with the D1 window (`request_logs`,
 * for rows not in R2 yet, such as a video job written before its record was consumed). Each id
 * once, in time order within an hour. Used by `GET /v1/master/logs`, the dashboard's download and
 * its request log.
 */
import * as z from "zod";
import type { Env } from "../env";
import { isoInstant } from "../lib/iso-instant";
import { HOUR_MS, hourStartOf } from "./aggregate";
import { windowHours } from "./log-consumer";
import { csvHeader, csvLine, dayPrefix, hourOfKey, publicRecord, readNdjsonGz, recordFromDbRow, type LogRecord } from "./log-record";

/** Longest period one export covers (the stream lists each day's objects and reads each hour). */
export const MAX_EXPORT_DAYS = 31;
const DAY_MS = 86_400_000;

/** Whose records: an organization, optionally one project, optionally only some keys (a developer's own). */
export interface LogScope {
  organizationId: string;
  projectId?: string;
  keyIds?: ReadonlySet<string>;
}

const inScope = (s: LogScope, r: LogRecord): boolean =>
  r.organizationId === s.organizationId && (s.projectId === undefined || r.projectId === s.projectId) && (s.keyIds === undefined || s.keyIds.has(r.apiKeyId));


/** `?from=&to=` of an export: ISO 8601, from before to, at most MAX_EXPORT_DAYS apart. */
export const periodQuery = z
  .object({ from: isoInstant("from"), to: isoInstant("to") })
  .refine((q) => q.from < q.to, { message: "'from' must be before 'to'", path: ["from"] })
  .refine((q) => q.to - q.from <= MAX_EXPORT_DAYS * DAY_MS, { message: `the period is at most ${MAX_EXPORT_DAYS} days; export longer periods in parts`, path: ["to"] });

/** The object keys of one day of an organization, by hour. */
async function dayObjects(bucket: R2Bucket, orgId: string, day: number): Promise<Map<number, string[]>> {
  const byHour = new Map<number, string[]>();
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: dayPrefix(orgId, day), cursor });
    for (const o of page.objects) {
      const h = hourOfKey(o.key);
      if (h === null) continue;
      const list = byHour.get(h) ?? [];
      list.push(o.key);
      byHour.set(h, list);
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return byHour;
}

/** Window rows of [from, to) not already seen (only where the window reaches). */
async function windowRecords(env: Env, scope: LogScope, from: number, to: number, now: number): Promise<LogRecord[]> {
  const hours = windowHours(env);
  const start = Math.max(from, now - hours * HOUR_MS);
  if (hours === 0 || start >= to) return [];
  const res = await env.DB.prepare("SELECT * FROM request_logs WHERE organization_id = ?1 AND created_at >= ?2 AND created_at < ?3").bind(scope.organizationId, start, to).all<Record<string, unknown>>();
  return res.results.map(recordFromDbRow);
}

/** The records of one hour in [from, to), each id once, oldest first. */
async function hourSlice(env: Env, scope: LogScope, keys: readonly string[], from: number, to: number, now: number): Promise<LogRecord[]> {
  const seen = new Set<string>();
  const out: LogRecord[] = [];
  const add = (r: LogRecord) => {
    if (seen.has(r.id) || r.createdAt < from || r.createdAt >= to || !inScope(scope, r)) return;
    seen.add(r.id);
    out.push(r);
  };
  for (const key of keys) {
    const obj = await env.LOGS_BUCKET.get(key);
    if (obj) for (const r of await readNdjsonGz(obj.body)) add(r);
  }
  for (const r of await windowRecords(env, scope, from, to, now)) add(r);
  return out.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}

/** Every record of [from, to), hour by hour (oldest first), as an async sequence of hours. */
export async function* recordsByHour(env: Env, scope: LogScope, from: number, to: number, now = Date.now()): AsyncGenerator<LogRecord[]> {
  let dayObjs = new Map<number, string[]>();
  let listedDay = -1;
  for (let h = hourStartOf(from); h < to; h += HOUR_MS) {
    const day = h - (h % DAY_MS);
    if (day !== listedDay) {
      dayObjs = await dayObjects(env.LOGS_BUCKET, scope.organizationId, day);
      listedDay = day;
    }
    const slice = await hourSlice(env, scope, dayObjs.get(h) ?? [], Math.max(from, h), Math.min(to, h + HOUR_MS), now);
    if (slice.length) yield slice;
  }
}

/** Same, newest hour first (the dashboard's request log pages back from `before`). */
export async function* recordsByHourDesc(env: Env, scope: LogScope, from: number, before: number, now = Date.now()): AsyncGenerator<LogRecord[]> {
  let dayObjs = new Map<number, string[]>();
  let listedDay = -1;
  for (let h = hourStartOf(before - 1); h + HOUR_MS > from; h -= HOUR_MS) {
    const day = h - (h % DAY_MS);
    if (day !== listedDay) {
      dayObjs = await dayObjects(env.LOGS_BUCKET, scope.organizationId, day);
      listedDay = day;
    }
    const slice = await hourSlice(env, scope, dayObjs.get(h) ?? [], Math.max(from, h), Math.min(before, h + HOUR_MS), now);
    if (slice.length) yield slice.reverse();
  }
}

export type ExportFormat = "ndjson" | "csv";

/** `Accept: text/csv` gives CSV; anything else NDJSON. */
export const exportFormat = (accept: string | undefined): ExportFormat => (accept && /\btext\/csv\b/i.test(accept) ? "csv" : "ndjson");

/** The records of a period as a stream (NDJSON: one record per line; CSV: a header, then one per line). */
export function exportStream(env: Env, scope: LogScope, from: number, to: number, format: ExportFormat): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const hours = recordsByHour(env, scope, from, to);
  let headerSent = format !== "csv";
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(csvHeader()));
        return;
      }
      const next = await hours.next();
      if (next.done) {
        controller.close();
        return;
      }
      const text = next.value.map(publicRecord).map((r) => (format === "csv" ? csvLine(r) : JSON.stringify(r) + "\n")).join("");
      controller.enqueue(encoder.encode(text));
    },
  });
}

export const exportContentType = (f: ExportFormat): string => (f === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8");
