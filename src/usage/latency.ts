/**
 * Latency histograms in the hourly aggregates: each `usage_hourly` row counts its requests per
 * bucket of total latency (`lat_b0..`) and of time to first token (`ttft_b0..`). Counts add up, so
 * the queue consumer sums them in SQL like every other aggregate, a rebuild from R2 recomputes them
 * from the records, and any period's p50/p95 per model or provider comes from the summed buckets
 * (exact to the bucket; interpolated inside it).
 *
 * Counted: answered requests (status < 400) that reached a provider (not cache hits, whose replay
 * says nothing about the provider; not refunds), with a measured latency; TTFT only when measured.
 */
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { histogramQuantile } from "../lib/histogram-quantile";
import { scopeFilter, type AnalyticsScope, type DateRange } from "./analytics-scope";
import { REFUND_KIND } from "./request-log";

/** Upper bounds (ms, exclusive) of the buckets; the last bucket is open (>= the last bound). */
export const LATENCY_BOUNDS_MS = [50, 100, 200, 400, 700, 1000, 1500, 2500, 4000, 7000, 12000, 25000] as const;
export const BUCKETS = LATENCY_BOUNDS_MS.length + 1;

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
export const LATENCY_COLUMNS: readonly string[] = range(BUCKETS).map((i) => `lat_b${i}`);
export const TTFT_COLUMNS: readonly string[] = range(BUCKETS).map((i) => `ttft_b${i}`);
/** Both histograms' columns, latency first: the order of `histogramSums` and of a group's `lb`/`tb`. */
export const HISTOGRAM_COLUMNS: readonly string[] = [...LATENCY_COLUMNS, ...TTFT_COLUMNS];

/** The bucket of a duration. */
export function bucketOf(ms: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((b) => ms < b);
  return i === -1 ? BUCKETS - 1 : i;
}

/** Whether a record counts in the histograms (the module comment). */
export const countsLatency = (r: { kind: string; statusCode: number; cached: boolean }): boolean => r.kind !== REFUND_KIND && r.statusCode < 400 && !r.cached;

/**
 * SQL: per column of HISTOGRAM_COLUMNS, a `SUM(...)` over rows exposing the record's kind, status,
 * cached flag, latency and TTFT under the given expressions (the consumer's grouping query).
 */
export function histogramSums(e: { kind: string; status: string; cached: string; latency: string; ttft: string }): string[] {
  const ok = `${e.kind} <> '${REFUND_KIND}' AND ${e.status} < 400 AND NOT ${e.cached}`;
  const inBucket = (v: string, i: number): string => {
    const lo = i === 0 ? null : LATENCY_BOUNDS_MS[i - 1]!;
    const hi = i < LATENCY_BOUNDS_MS.length ? LATENCY_BOUNDS_MS[i]! : null;
    return [`${v} IS NOT NULL`, lo === null ? null : `${v} >= ${lo}`, hi === null ? null : `${v} < ${hi}`].filter(Boolean).join(" AND ");
  };
  return [
    ...range(BUCKETS).map((i) => `SUM(CASE WHEN ${ok} AND ${inBucket(e.latency, i)} THEN 1 ELSE 0 END)`),
    ...range(BUCKETS).map((i) => `SUM(CASE WHEN ${ok} AND ${inBucket(e.ttft, i)} THEN 1 ELSE 0 END)`),
  ];
}

/** Adds a record to a group's histograms (the rebuild's grouping in code). */
export function addToHistograms(lb: number[], tb: number[], r: { kind: string; statusCode: number; cached: boolean; latencyMs: number | null; ttftMs: number | null }): void {
  if (!countsLatency(r)) return;
  if (r.latencyMs !== null && r.latencyMs !== undefined) lb[bucketOf(r.latencyMs)]! += 1;
  if (r.ttftMs !== null && r.ttftMs !== undefined) tb[bucketOf(r.ttftMs)]! += 1;
}

export const emptyHistogram = (): number[] => new Array<number>(BUCKETS).fill(0);

/** A percentile estimate: `ms` interpolated inside its bucket; `over` when it lies in the open last bucket (at least `ms`). */
export interface Percentile {
  ms: number;
  over: boolean;
}

/**
 * The q-quantile (0 < q < 1) of a histogram, or null when it counts nothing: interpolated inside
 * its bucket (src/lib/histogram-quantile.ts). The hourly rows keep no maximum, so the open last
 * bucket reads as its lower edge, marked `over`.
 */
export function percentile(counts: readonly number[], q: number): Percentile | null {
  const p = histogramQuantile(counts, LATENCY_BOUNDS_MS, q);
  return p && { ms: p.ms, over: p.open };
}

export interface LatencyRow {
  id: string;
  /** Requests measured (total latency). */
  measured: number;
  p50: Percentile | null;
  p95: Percentile | null;
  ttftMeasured: number;
  ttftP50: Percentile | null;
  ttftP95: Percentile | null;
}

/** p50/p95 of total latency and TTFT per model or provider over a period, from the hourly aggregates. */
export async function latencyByGroup(env: Env, scope: AnalyticsScope, period: Pick<DateRange, "fromMs" | "toMs">, groupBy: "model" | "provider"): Promise<LatencyRow[]> {
  const col = sql.raw(groupBy);
  const sums = sql.raw(HISTOGRAM_COLUMNS.map((c, i) => `SUM(${c}) AS h${i}`).join(", "));
  const rows = await getDb(env.DB).all<Record<string, number | string>>(sql`
    SELECT ${col} AS g, ${sums} FROM usage_hourly
    WHERE ${scopeFilter(scope)} AND hour_start >= ${period.fromMs} AND hour_start < ${period.toMs}
    GROUP BY ${col}
  `);
  const out: LatencyRow[] = [];
  for (const r of rows) {
    const h = range(HISTOGRAM_COLUMNS.length).map((i) => Number(r[`h${i}`] ?? 0));
    const lat = h.slice(0, BUCKETS);
    const ttft = h.slice(BUCKETS);
    const measured = lat.reduce((a, b) => a + b, 0);
    const ttftMeasured = ttft.reduce((a, b) => a + b, 0);
    if (measured === 0 && ttftMeasured === 0) continue;
    out.push({ id: String(r.g), measured, p50: percentile(lat, 0.5), p95: percentile(lat, 0.95), ttftMeasured, ttftP50: percentile(ttft, 0.5), ttftP95: percentile(ttft, 0.95) });
  }
  return out.sort((a, b) => b.measured - a.measured || (a.id < b.id ? -1 : 1));
}
