/**
 * Time-to-first-token distribution of one provider+model (pure): counts per fixed bin, so the
 * global ProviderMetrics object can merge and age them like its other counters, and routing can
 * read percentiles (the attempt timeouts and the hedge delay use p99 and p95: a mean hides the
 * slow tail that a timeout has to clear).
 *
 * Bins are upper edges in ms; a percentile is interpolated inside the bin that holds it and capped
 * by the slowest sample seen (src/lib/histogram-quantile.ts), so a p95 of 420 ms reads as 420 ms,
 * not as its bin's 700 ms edge.
 */
import { histogramQuantile } from "../lib/histogram-quantile";

/** Upper edges (ms) of the bins; the last bin holds everything slower. */
export const TTFT_BIN_EDGES_MS: readonly number[] = [200, 400, 700, 1_000, 1_500, 2_000, 3_000, 4_500, 7_000, 10_000, 15_000, 25_000, 40_000, 60_000];

/** Fewer samples than this in the window: no percentile (the defaults apply). */
export const MIN_TTFT_SAMPLES = 10;

export const emptyHistogram = (): number[] => new Array<number>(TTFT_BIN_EDGES_MS.length + 1).fill(0);

/** Index of the bin holding `ms`. */
export function binOf(ms: number): number {
  const i = TTFT_BIN_EDGES_MS.findIndex((edge) => ms <= edge);
  return i === -1 ? TTFT_BIN_EDGES_MS.length : i;
}

/** Adds `weight` x `other` into `into` (mutates and returns it); a missing or short list counts as zeros. */
export function addHistogram(into: number[], other: readonly number[] | undefined, weight = 1): number[] {
  if (!other) return into;
  for (let i = 0; i < into.length && i < other.length; i++) into[i]! += weight * (other[i] ?? 0);
  return into;
}

/**
 * The `q` quantile (0 < q <= 1) interpolated inside its bin and capped by `maxMs` (the slowest
 * sample in the window, null when unknown: the open last bin then reads as the last edge), or null
 * when the histogram holds fewer than `minSamples` samples (`count` is the unweighted number, since
 * weights only shift which minutes dominate).
 */
export function quantileMs(hist: readonly number[], q: number, count: number, maxMs: number | null = null, minSamples = MIN_TTFT_SAMPLES): number | null {
  if (count < minSamples) return null;
  return histogramQuantile(hist, TTFT_BIN_EDGES_MS, q, maxMs)?.ms ?? null;
}
