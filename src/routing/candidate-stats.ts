/**
 * The live stats routing ranks a candidate by: its endpoint's series in the provider metrics (a
 * regional endpoint other than the provider's default is a series of its own, `<provider>@<region>`)
 * as seen from the caller's continent.
 *
 * Per continent: once the caller's continent has evidence for the endpoint (MIN_CONTINENT_SAMPLES
 * attempts in the window), its own uptime, time to first token and throughput rank it: what callers
 * there measured, network included. Until then the global series stands in, with the caller's
 * distance to the endpoint added to its time to first token (regions.ts: same continent near,
 * others far), so a new continent starts near and measures from there; exploration (score.ts) runs
 * the runners-up now and then, and their attempts land in the caller's continent's series too.
 * Without a known continent (no `cf`, tests) the global series ranks alone, as before.
 */
import type { Candidate } from "./candidates";
import { continentStats, routeStats } from "./live-metrics";
import { distancePriorMs, type Continent } from "./regions";
import { UPTIME_PENALTY_THRESHOLD, type RouteStats } from "./score";

/** The provider id an endpoint's attempts are recorded under. */
export const metricsProviderId = (c: Pick<Candidate, "providerId" | "credential">): string =>
  "region" in c.credential && c.credential.region ? `${c.providerId}@${c.credential.region}` : c.providerId;

/** Time to first token assumed for an endpoint nothing is known about, before the distance prior. */
const UNKNOWN_TTFT_MS = 400;

/** Attempts from the caller's continent before its own series replaces the global one plus the prior. */
export const MIN_CONTINENT_SAMPLES = 3;

export function candidateStats(c: Candidate, caller: Continent | null | undefined): RouteStats {
  const id = metricsProviderId(c);
  const near = caller ? continentStats(caller, id, c.modelId) : null;
  const measured = near !== null && (near.samples ?? 0) >= MIN_CONTINENT_SAMPLES;
  // The usual case once warm: the continent measured it, nothing else to read.
  if (measured && near.latencyMs !== null && near.throughput !== null) return near;
  const stats = routeStats(id, c.modelId);
  const prior = distancePriorMs(caller ?? null, c.region);
  const global = prior ? { ...stats, latencyMs: (stats.latencyMs ?? UNKNOWN_TTFT_MS) + prior } : stats;
  if (!measured) return global;
  // Measured from here but only failures (or no output) yet: its uptime, the rest from the global series.
  return { ...near, latencyMs: near.latencyMs ?? global.latencyMs, throughput: near.throughput ?? global.throughput };
}

/**
 * Attempts from one continent to an endpoint that keep it measured there: below this, exploration
 * may send that continent's callers to it now and then; at or above it, only while it looks
 * unhealthy from there (so a region that failed is seen recovering instead of waiting for its
 * failures to leave the window). The window forgets old attempts, so a healthy runner-up gets
 * measured again about every half hour.
 */
export const EXPLORE_UNTIL_SAMPLES = 10;

/** Whether the caller's continent should measure this endpoint again (exploration, score.ts). */
export function needsEvidence(c: Candidate, caller: Continent | null): boolean {
  if (!caller) return true;
  const s = continentStats(caller, metricsProviderId(c), c.modelId);
  return (s.samples ?? 0) < EXPLORE_UNTIL_SAMPLES || s.uptime < UPTIME_PENALTY_THRESHOLD;
}
