/**
 * The live stats routing ranks a candidate by: its endpoint's series in the provider metrics (a
 * regional endpoint other than the provider's default is a series of its own, `<provider>@<region>`),
 * with the caller's distance to the endpoint added to its time to first token (regions.ts: same
 * continent near, others far). The metrics are global today, so the prior always applies when the
 * caller's continent is known; without it (no `cf`, tests) ranking is as before.
 */
import type { Candidate } from "./candidates";
import { routeStats } from "./live-metrics";
import { distancePriorMs, type Continent } from "./regions";
import type { RouteStats } from "./score";

/** The provider id an endpoint's attempts are recorded under. */
export const metricsProviderId = (c: Pick<Candidate, "providerId" | "credential">): string =>
  "region" in c.credential && c.credential.region ? `${c.providerId}@${c.credential.region}` : c.providerId;

/** Time to first token assumed for an endpoint nothing is known about, before the distance prior. */
const UNKNOWN_TTFT_MS = 400;

export function candidateStats(c: Candidate, caller: Continent | null | undefined): RouteStats {
  const stats = routeStats(metricsProviderId(c), c.modelId);
  const prior = distancePriorMs(caller ?? null, c.region);
  if (!prior) return stats;
  return { ...stats, latencyMs: (stats.latencyMs ?? UNKNOWN_TTFT_MS) + prior };
}
