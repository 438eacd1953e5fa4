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
 * - The caller's `provider` preferences (preferences.ts): `sort` ranks by price, throughput or
 *   latency instead of the score (no exploration; unknown values last; a provider below
 *   PINNED_FAILOVER_UPTIME with enough samples after the healthy ones); `order` puts its providers
 *   first, in that order; `allow_fallbacks: false` without `order` keeps only the first choice.
 * - Fallback models (`models`): each model's candidates are planned as above, then tried model
 *   after model (the request's `model` first).
 * At most MAX_ATTEMPTS attempts per model (the primary plus two failovers).
 */
import type { Candidate, RequestNeeds } from "./candidates";
import { tokenCost } from "../billing/estimate";
import { rank, type RouteStats } from "./score";
import type { ProviderPreferences } from "./preferences";

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
  /** Exploration only picks runners-up this says should be measured against the leader (absent: any of the top three). */
  needsEvidence?: (c: Candidate, leader: Candidate) => boolean;
  random?: () => number;
}

export function orderCandidates(candidates: readonly Candidate[], needs: RequestNeeds, opts: OrderOptions): Candidate[] {
  // One model (no `models` fallbacks), the common case: no grouping.
  const first = candidates[0]?.modelRank;
  if (candidates.every((c) => c.modelRank === first)) return orderOneModel(candidates, needs, opts);
  const ranks = [...new Set(candidates.map((c) => c.modelRank))].sort((a, b) => a - b);
  const plan: Candidate[] = [];
  for (const r of ranks) plan.push(...orderOneModel(candidates.filter((c) => c.modelRank === r), needs, opts));
  return opts.noFallback ? plan.slice(0, 1) : plan;
}

/** Expected cost of this request on a candidate (price comparison). */
const expectedCost = (c: Candidate, needs: RequestNeeds): bigint =>
  tokenCost(c.mapping.pricing, needs.promptTokens, needs.maxTokens ?? Math.min(TYPICAL_COMPLETION_TOKENS, c.mapping.maxOutput));

/** `provider.sort`: by that value alone, unknown last, unhealthy (with evidence) after healthy; ties keep catalogue order. */
function sortedBy(list: readonly Candidate[], needs: RequestNeeds, sort: NonNullable<ProviderPreferences["sort"]>, opts: OrderOptions): Candidate[] {
  const rows = list.map((c, index) => {
    const stats = opts.stats(c);
    const unhealthy = stats.uptime < PINNED_FAILOVER_UPTIME && (stats.samples ?? 0) >= PINNED_MIN_SAMPLES;
    const key =
      sort === "price" ? Number(expectedCost(c, needs)) : sort === "throughput" ? (stats.throughput === null ? Infinity : -stats.throughput) : (stats.latencyMs ?? Infinity);
    return { c, index, unhealthy, key };
  });
  rows.sort((a, b) => Number(a.unhealthy) - Number(b.unhealthy) || a.key - b.key || a.index - b.index);
  return rows.map((r) => r.c);
}

/** `provider.order` first (in its order), then the rest as ranked; `allow_fallbacks: false` stops after them. */
function withOrder(ranked: readonly Candidate[], prefs: ProviderPreferences): Candidate[] {
  const order = prefs.order ?? [];
  if (!order.length) return prefs.allow_fallbacks === false ? ranked.slice(0, 1) : [...ranked];
  const listed = ranked.filter((c) => order.includes(c.providerId)).sort((a, b) => order.indexOf(a.providerId) - order.indexOf(b.providerId));
  if (prefs.allow_fallbacks === false) return listed;
  return [...listed, ...ranked.filter((c) => !order.includes(c.providerId))];
}

function orderOneModel(candidates: readonly Candidate[], needs: RequestNeeds, opts: OrderOptions): Candidate[] {
  const prefs = needs.preferences ?? null;
  const ranked = (list: readonly Candidate[]) =>
    prefs?.sort ? sortedBy(list, needs, prefs.sort, opts) : rankByScore(list, needs, opts);

  // The pinned mapping's endpoints (one per region), best first: they fail over among themselves.
  const pinnedEndpoints = ranked(candidates.filter((c) => c.pinned));
  const pinned = pinnedEndpoints[0];
  if (pinned) {
    if (opts.noFallback) return [pinned];
    const { uptime, samples = 0 } = opts.stats(pinned);
    if (uptime >= PINNED_FAILOVER_UPTIME || samples < PINNED_MIN_SAMPLES) return pinnedEndpoints.slice(0, MAX_ATTEMPTS);
    const better = ranked(candidates.filter((c) => !c.pinned && opts.stats(c).uptime > uptime)).slice(0, MAX_ATTEMPTS - 1);
    const random = opts.random ?? Math.random;
    if (better.length && random() < opts.pinnedProbeRate) return [pinned, ...better];
    return [...better, pinned];
  }
  const all = prefs ? withOrder(ranked(candidates), prefs) : ranked(candidates);
  return opts.noFallback ? all.slice(0, 1) : all.slice(0, MAX_ATTEMPTS);
}

function rankByScore(candidates: readonly Candidate[], needs: RequestNeeds, opts: OrderOptions): Candidate[] {
  // With `provider.order` the caller chose the first place: exploration would overrule it.
  const explorationRate = needs.preferences?.order?.length ? 0 : opts.explorationRate;
  return rank(
    candidates,
    (c) => ({
      cost: expectedCost(c, needs),
      stats: opts.stats(c),
      cacheable:
        c.mapping.pricing.input_cache_read !== undefined &&
        c.mapping.minCacheableTokens !== undefined &&
        needs.promptTokens >= c.mapping.minCacheableTokens,
    }),
    { explorationRate, ...(opts.random ? { random: opts.random } : {}), ...(opts.needsEvidence ? { needsEvidence: opts.needsEvidence } : {}) },
  );
}

/**
 * Whether a non-retryable failure of `cand` is the answer for its model: it was the pinned
 * provider, or the first choice of its model. With fallback models, such a failure moves on to the
 * next model instead of ending the request (execute.ts).
 */
export function isDecisiveAttempt(plan: readonly Candidate[], cand: Candidate): boolean {
  const group = plan.filter((c) => c.modelRank === cand.modelRank);
  return cand.pinned || (!group.some((c) => c.pinned) && group[0] === cand);
}
