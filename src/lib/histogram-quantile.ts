/**
 * A quantile from a histogram of counts per bin (pure), estimated the way Prometheus'
 * `histogram_quantile` does: find the bin holding the rank, then interpolate linearly inside it,
 * as if its samples were spread evenly between its lower and upper edge. Reading the bin's upper
 * edge instead overstates every percentile by up to a whole bin (a 420 ms p95 in a 400-700 ms bin
 * read as 700 ms).
 *
 * The observed maximum, when the caller kept it, caps the estimate: the true quantile can never
 * exceed the slowest sample, and it also gives the open last bin an upper edge.
 */

export interface BinQuantile {
  /** The estimate, rounded to a whole ms. */
  ms: number;
  /** The rank fell in the open last bin: without a known maximum, `ms` is only its lower edge. */
  open: boolean;
}

/**
 * The `q` quantile (0 < q <= 1) of `counts`, where bin i holds samples between `edges[i - 1]`
 * (0 for the first) and `edges[i]`, and the last bin (index `edges.length`) everything above the
 * last edge. Null when the histogram counts nothing. Counts may be weighted (fractional).
 */
export function histogramQuantile(counts: readonly number[], edges: readonly number[], q: number, maxMs: number | null = null): BinQuantile | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (!(total > 0)) return null;
  const rank = q * total;
  const cap = (v: number): number => Math.round(maxMs !== null ? Math.min(v, maxMs) : v);
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i] ?? 0;
    // The small tolerance keeps a weighted sum's rounding from skipping the bin that ends at the rank.
    if (c > 0 && seen + c >= rank - 1e-9) {
      const lo = i === 0 ? 0 : edges[i - 1]!;
      const open = i >= edges.length;
      if (open && maxMs === null) return { ms: Math.round(lo), open: true };
      const hi = open ? Math.max(lo, maxMs!) : edges[i]!;
      return { ms: cap(lo + (hi - lo) * Math.min(1, Math.max(0, rank - seen) / c)), open: false };
    }
    seen += c;
  }
  return null;
}
