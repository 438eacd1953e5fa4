/**
 * Orders eligible candidates into the attempt plan (first = primary, then failover targets).
 *
 * - Canonical ids: ranked by score.ts; failover walks down the ranking.
 * - Pinned ids (`provider/model`): only that provider while its uptime is >= 90%, or while it has
 *   fewer than PINNED_MIN_SAMPLES recent attempts (one failure out of two is no evidence). Below
 *   90% the request starts on the best alternatives whose uptime is better, the pinned provider
 *   always kept as the last attempt; and a share (ROUTING_PINNED_PROBE_RATE, default 10%) of such requests tries the
 *   pinned provider FIRST (a probe), so it can earn its traffic back once it recovers.
 * - `x-no-fallback: true`: exactly one attempt (the pinned provider, or the best ranked one).
 * At most MAX_ATTEMPTS attempts (the primary plus two failovers).
 */
import type { Candidate, RequestNeeds } from "./candidates";
import { tokenCost } from "../billing/estimate";
import { rank, type RouteStats } from "./score";

export const MAX_ATTEMPTS = 3;
export const PINNED_FAILOVER_UPTIME = 0.9;
/** Recent attempts needed before a pinned provider's uptime can send its traffic elsewhere. */
export const PINNED_MIN_SAMPLES = 5;
/** Share of requests that probe a low-uptime pinned provider first. */
/** Completion length assumed for price comparison when the caller sets no cap. */
const TYPICAL_COMPLETION_TOKENS = 256;

export interface OrderOptions {
  noFallback: boolean;
  explorationRate: number;
  /** Share of requests probing a low-uptime pinned provider first (`pinnedProbeRate(env)`). */
  pinnedProbeRate: number;
  stats: (c: Candidate) => RouteStats;
  random?: () => number;
}

export function orderCandidates(candidates: readonly Candidate[], needs: RequestNeeds, opts: OrderOptions): Candidate[] {
  const ranked = (list: readonly Candidate[]) =>
    rank(
      list,
      (c) => ({
        cost: tokenCost(c.mapping.pricing, needs.promptTokens, needs.maxTokens ?? Math.min(TYPICAL_COMPLETION_TOKENS, c.mapping.maxOutput)),
        stats: opts.stats(c),
        cacheable:
          c.mapping.pricing.input_cache_read !== undefined &&
          c.mapping.minCacheableTokens !== undefined &&
          needs.promptTokens >= c.mapping.minCacheableTokens,
      }),
      { explorationRate: opts.explorationRate, ...(opts.random ? { random: opts.random } : {}) },
    );

  const pinned = candidates.find((c) => c.pinned);
  if (pinned) {
    if (opts.noFallback) return [pinned];
    const { uptime, samples = 0 } = opts.stats(pinned);
    if (uptime >= PINNED_FAILOVER_UPTIME || samples < PINNED_MIN_SAMPLES) return [pinned];
    const better = ranked(candidates.filter((c) => c !== pinned && opts.stats(c).uptime > uptime)).slice(0, MAX_ATTEMPTS - 1);
    const random = opts.random ?? Math.random;
    if (better.length && random() < opts.pinnedProbeRate) return [pinned, ...better];
    return [...better, pinned];
  }
  const all = ranked(candidates);
  return opts.noFallback ? all.slice(0, 1) : all.slice(0, MAX_ATTEMPTS);
}
