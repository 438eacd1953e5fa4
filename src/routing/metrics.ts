/**
 * Live provider metrics as data (pure): one-minute buckets per provider+model over the last
 * 30 minutes, and the summaries routing scores with.
 *
 * - uptime: successes / attempts, where client errors (the request's own fault) do not count and
 *   network errors, timeouts, 5xx and 429 count as failures. Buckets are weighted by age (half-life
 *   5 minutes) so recent minutes dominate, and one virtual success is added (a single failure of a
 *   new provider gives 50%, not 0%).
 * - throughput: output tokens per second of generation (after the first token), same weights.
 * - latency: mean time to first token (ms), same weights; its p50, p95 and p99 from a histogram
 *   (ttft-histogram.ts), same weights, once there are enough samples, interpolated inside their
 *   bin and capped by the slowest time to first token in the window.
 */
import type { RouteStats } from "./score";
import { addHistogram, binOf, emptyHistogram, quantileMs } from "./ttft-histogram";

export interface AttemptSample {
  provider: string;
  model: string;
  /** Epoch ms when the attempt ended. */
  at: number;
  /** "ok" | "error" (counts against uptime) | "client_error" (ignored for uptime). */
  outcome: "ok" | "error" | "client_error";
  ttftMs: number | null;
  outputTokens: number;
  /** Time from first token to the end of the response (ms), null when unknown. */
  generationMs: number | null;
}

export interface Bucket {
  /** Epoch minute (ms / 60000, floored). */
  minute: number;
  requests: number;
  errors: number;
  ttftSum: number;
  ttftCount: number;
  tokens: number;
  generationMs: number;
  /** Time-to-first-token counts per bin (ttft-histogram.ts); absent in buckets stored before it existed. */
  ttftHist?: number[];
  /** The slowest time to first token counted in `ttftHist` (ms); absent in buckets stored before it existed. */
  ttftMaxMs?: number;
}

export type Series = Record<string, Bucket[]>;

export const WINDOW_MINUTES = 30;
const HALF_LIFE_MINUTES = 5;
const PRIOR_SUCCESSES = 1;

export const seriesKey = (provider: string, model: string): string => `${provider}\u0000${model}`;
export const splitSeriesKey = (key: string): { provider: string; model: string } => {
  const i = key.indexOf("\u0000");
  return { provider: key.slice(0, i), model: key.slice(i + 1) };
};

export const minuteOf = (ms: number): number => Math.floor(ms / 60_000);

/** Adds a sample to a bucket list (mutates and returns it), dropping buckets outside the window. */
export function addSample(buckets: Bucket[], s: AttemptSample): Bucket[] {
  if (s.outcome === "client_error") return buckets;
  const minute = minuteOf(s.at);
  let b = buckets.find((x) => x.minute === minute);
  if (!b) {
    b = { minute, requests: 0, errors: 0, ttftSum: 0, ttftCount: 0, tokens: 0, generationMs: 0 };
    buckets.push(b);
    buckets.sort((x, y) => x.minute - y.minute);
  }
  b.requests += 1;
  if (s.outcome === "error") b.errors += 1;
  if (s.outcome === "ok" && s.ttftMs !== null) {
    b.ttftSum += s.ttftMs;
    b.ttftCount += 1;
    // A bucket stored before the maximum existed keeps it unknown rather than understated.
    if (b.ttftHist === undefined || b.ttftMaxMs !== undefined) b.ttftMaxMs = Math.max(b.ttftMaxMs ?? 0, s.ttftMs);
    b.ttftHist ??= emptyHistogram();
    b.ttftHist[binOf(s.ttftMs)]! += 1;
  }
  if (s.outcome === "ok" && s.generationMs !== null && s.generationMs > 0 && s.outputTokens > 0) {
    b.tokens += s.outputTokens;
    b.generationMs += s.generationMs;
  }
  return prune(buckets, s.at);
}

export function prune(buckets: Bucket[], now: number): Bucket[] {
  const oldest = minuteOf(now) - WINDOW_MINUTES;
  let drop = 0;
  while (drop < buckets.length && buckets[drop]!.minute <= oldest) drop++;
  if (drop) buckets.splice(0, drop);
  return buckets;
}

export interface StatsSummary extends RouteStats {
  /** Median time to first token (ms), null while evidence is thin (dashboards; routing uses the mean). */
  ttftP50Ms: number | null;
  /** Attempts counted in the window (unweighted). */
  requests: number;
  errors: number;
}

export function summarize(buckets: readonly Bucket[], now: number): StatsSummary {
  const current = minuteOf(now);
  let wReq = 0, wErr = 0, wTtft = 0, wTtftN = 0, wTok = 0, wGen = 0, requests = 0, errors = 0, ttftN = 0;
  const hist = emptyHistogram();
  // The window's slowest time to first token caps its percentiles; unknown (null) as soon as one
  // counted bucket predates the maximum.
  let maxMs: number | null = 0;
  for (const b of buckets) {
    const age = current - b.minute;
    if (age >= WINDOW_MINUTES || age < -1) continue;
    const w = Math.pow(0.5, Math.max(0, age) / HALF_LIFE_MINUTES);
    wReq += w * b.requests;
    wErr += w * b.errors;
    wTtft += w * b.ttftSum;
    wTtftN += w * b.ttftCount;
    ttftN += b.ttftCount;
    addHistogram(hist, b.ttftHist, w);
    if (b.ttftHist && maxMs !== null) maxMs = b.ttftMaxMs === undefined ? null : Math.max(maxMs, b.ttftMaxMs);
    wTok += w * b.tokens;
    wGen += w * b.generationMs;
    requests += b.requests;
    errors += b.errors;
  }
  return {
    uptime: (wReq - wErr + PRIOR_SUCCESSES) / (wReq + PRIOR_SUCCESSES),
    throughput: wGen > 0 ? (wTok / wGen) * 1000 : null,
    latencyMs: wTtftN > 0 ? wTtft / wTtftN : null,
    ttftP50Ms: quantileMs(hist, 0.5, ttftN, maxMs),
    ttftP95Ms: quantileMs(hist, 0.95, ttftN, maxMs),
    ttftP99Ms: quantileMs(hist, 0.99, ttftN, maxMs),
    requests,
    errors,
  };
}

/** Combines bucket lists (e.g. the global snapshot plus this isolate's unflushed samples). */
export function mergeBuckets(a: readonly Bucket[], b: readonly Bucket[]): Bucket[] {
  const byMinute = new Map<number, Bucket>();
  for (const x of [...a, ...b]) {
    const cur = byMinute.get(x.minute);
    if (!cur) byMinute.set(x.minute, { ...x, ...(x.ttftHist ? { ttftHist: [...x.ttftHist] } : {}) });
    else {
      if (x.ttftHist) {
        // A maximum is only known when every merged histogram kept one.
        const known = (cur.ttftHist === undefined || cur.ttftMaxMs !== undefined) && x.ttftMaxMs !== undefined;
        cur.ttftHist = addHistogram(cur.ttftHist ?? emptyHistogram(), x.ttftHist);
        if (known) cur.ttftMaxMs = Math.max(cur.ttftMaxMs ?? 0, x.ttftMaxMs!);
        else delete cur.ttftMaxMs;
      }
      cur.requests += x.requests;
      cur.errors += x.errors;
      cur.ttftSum += x.ttftSum;
      cur.ttftCount += x.ttftCount;
      cur.tokens += x.tokens;
      cur.generationMs += x.generationMs;
    }
  }
  return [...byMinute.values()].sort((x, y) => x.minute - y.minute);
}
