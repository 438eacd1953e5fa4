/**
 * The live stats routing ranks a candidate by, as seen from the caller's continent. Each endpoint
 * has a series of its own in the provider metrics (a regional endpoint other than the provider's
 * default is `<provider>@<region>`), globally and per caller continent.
 *
 * Per continent, time to first token is the evidence that separates regions (network included),
 * and it is read so that an early accident cannot lock a continent onto a far region:
 * - An endpoint the continent has not measured is estimated from the region table: the best time
 *   to first token any endpoint of the same provider and model shows globally (the upstream's own
 *   pace, measured near somebody) plus the caller's distance to it (regions.ts). Never the
 *   endpoint's own global series: that holds other continents' network, and an unknown one is not
 *   slower than a measured one.
 * - A measured endpoint's mean is blended with that estimate as PRIOR_WEIGHT attempts' worth of
 *   evidence, so the first few samples (a cold isolate, new connections, a loaded moment) do not
 *   decide alone; the continent's own mean takes over as its attempts add up.
 * - Uptime is the continent's once it has MIN_CONTINENT_SAMPLES attempts, the global one before.
 * - Throughput is shared by the endpoints of one provider and model (their global series pooled):
 *   output pace after the first token is the model server's, not the network's, and per region it is
 *   mostly noise from short answers, which must not reorder regions.
 * Exploration (score.ts) keeps runners-up measured per continent: those short of evidence, those
 * that look unhealthy from here, and those the region table puts nearer than the current leader
 * (the evidence contradicts the table: keep measuring until one of them is shown wrong).
 * Without a known continent (no `cf`, tests) the global series ranks alone, with no prior.
 */
import type { Candidate } from "./candidates";
import { continentStats, routeStats } from "./live-metrics";
import { distancePriorMs, type Continent } from "./regions";
import { UPTIME_PENALTY_THRESHOLD, type RouteStats } from "./score";

/** The provider id an endpoint's attempts are recorded under. */
export const metricsProviderId = (c: Pick<Candidate, "providerId" | "credential">): string =>
  "region" in c.credential && c.credential.region ? `${c.providerId}@${c.credential.region}` : c.providerId;

/** Time to first token assumed for a provider and model nothing is known about, before the distance prior. */
const UNKNOWN_TTFT_MS = 400;

/** Attempts from the caller's continent before its own uptime replaces the global one. */
export const MIN_CONTINENT_SAMPLES = 3;

/** How many attempts' worth of evidence the region table's estimate counts for, beside a continent's mean. */
export const PRIOR_WEIGHT = 10;

/**
 * Attempts from one continent to an endpoint that keep it measured there: below this, exploration
 * may send that continent's callers to it now and then; at or above it, only while it looks
 * unhealthy from there (a region that failed is seen recovering instead of waiting for its failures
 * to leave the window) or while the region table says it is nearer than the leader. A farther
 * runner-up needs no more: beside PRIOR_WEIGHT its few samples only confirm the table, and every
 * extra exploration is a request sent far. The window forgets old attempts, so a healthy runner-up
 * gets measured again about every half hour.
 */
export const EXPLORE_UNTIL_SAMPLES = MIN_CONTINENT_SAMPLES;

/** What ranking reads for the candidates of one request. */
export interface RankingView {
  stats(c: Candidate): RouteStats;
  /** Whether exploration may put `c` first instead of `leader` (score.ts). */
  needsEvidence(c: Candidate, leader: Candidate): boolean;
}

const siblingKey = (c: Candidate): string => `${c.providerId}\u0000${c.modelId}`;

/** The ranking view of one request's candidates for a caller on `caller` (null: unknown). */
export function rankingView(candidates: readonly Candidate[], caller: Continent | null | undefined): RankingView {
  const cache = new Map<Candidate, RouteStats>();
  const reference = new Map<string, { ttftMs: number; throughput: number | null }>();
  // Per provider+model: the best global time to first token of its endpoints, and their pooled throughput.
  const referenceOf = (c: Candidate) => {
    const key = siblingKey(c);
    let r = reference.get(key);
    if (!r) {
      let best: number | null = null;
      let tpSum = 0;
      let tpN = 0;
      for (const s of candidates) {
        if (siblingKey(s) !== key) continue;
        const g = routeStats(metricsProviderId(s), s.modelId);
        if (g.latencyMs !== null && (best === null || g.latencyMs < best)) best = g.latencyMs;
        if (g.throughput !== null) {
          tpSum += g.throughput;
          tpN++;
        }
      }
      reference.set(key, (r = { ttftMs: best ?? UNKNOWN_TTFT_MS, throughput: tpN ? tpSum / tpN : null }));
    }
    return r;
  };
  const stats = (c: Candidate): RouteStats => {
    const hit = cache.get(c);
    if (hit) return hit;
    const id = metricsProviderId(c);
    const global = routeStats(id, c.modelId);
    let out: RouteStats = global;
    if (caller) {
      const ref = referenceOf(c);
      const near = continentStats(caller, id, c.modelId);
      const n = near.samples ?? 0;
      const estimate = ref.ttftMs + distancePriorMs(caller, c.region);
      const latencyMs = near.latencyMs === null ? estimate : (n * near.latencyMs + PRIOR_WEIGHT * estimate) / (n + PRIOR_WEIGHT);
      const own = n >= MIN_CONTINENT_SAMPLES;
      out = { ...global, uptime: own ? near.uptime : global.uptime, samples: own ? n : (global.samples ?? 0), latencyMs, throughput: ref.throughput };
    }
    cache.set(c, out);
    return out;
  };
  return {
    stats,
    needsEvidence: (c, leader) => needsEvidence(c, caller ?? null, leader),
  };
}

/** The stats of one candidate alone (its siblings unknown): see rankingView. */
export const candidateStats = (c: Candidate, caller: Continent | null | undefined): RouteStats => rankingView([c], caller).stats(c);

/** Whether the caller's continent should measure this endpoint again (exploration, score.ts). */
export function needsEvidence(c: Candidate, caller: Continent | null, leader?: Candidate): boolean {
  if (!caller) return true;
  const s = continentStats(caller, metricsProviderId(c), c.modelId);
  if ((s.samples ?? 0) < EXPLORE_UNTIL_SAMPLES || s.uptime < UPTIME_PENALTY_THRESHOLD) return true;
  return leader !== undefined && distancePriorMs(caller, c.region) < distancePriorMs(caller, leader.region);
}
