/**
 * Orders eligible candidates into the attempt plan (first = primary, then failover targets).
 *
 * - Canonical ids: ranked by score.ts; failover walks down the ranking.
 * - Pinned ids (`provider/model`): only that provider while its uptime is >= 90%. Below 90% the
 *   request starts on the best alternative whose uptime is better, the pinned provider is kept
 *   as the last resort.
 * - `x-no-fallback: true`: exactly one attempt (the pinned provider, or the best ranked one).
 * At most MAX_ATTEMPTS attempts (the primary plus two failovers).
 */
import type { Candidate, RequestNeeds } from "./candidates";
import { tokenCost } from "../billing/estimate";
import { rank, type RouteStats } from "./score";

export const MAX_ATTEMPTS = 3;
export const PINNED_FAILOVER_UPTIME = 0.9;
/** Completion length assumed for price comparison when the caller sets no cap. */
const TYPICAL_COMPLETION_TOKENS = 256;

export interface OrderOptions {
  noFallback: boolean;
  explorationRate: number;
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
    const uptime = opts.stats(pinned).uptime;
    if (uptime >= PINNED_FAILOVER_UPTIME) return [pinned];
    const better = candidates.filter((c) => c !== pinned && opts.stats(c).uptime > uptime);
    return [...ranked(better), pinned].slice(0, MAX_ATTEMPTS);
  }
  const all = ranked(candidates);
  return opts.noFallback ? all.slice(0, 1) : all.slice(0, MAX_ATTEMPTS);
}
