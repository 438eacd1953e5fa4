/**
 * The doors' attempts (embeddings, images, moderations, video jobs) in the live metrics
 * (live-metrics.ts `reportAttempts`), as chat records its own: the same sample shape, under the
 * endpoint's series (`<provider>@<region>` for a regional one, candidate-stats.ts), globally and
 * for the caller's continent. Without them a door's regional endpoints ranked by the region table
 * alone. A door's answer arrives in one piece, so its time to first token is the attempt's
 * latency: the per-continent evidence ranking compares. Attempts an organization's own upstream
 * served (a BYOK key with its own base URL) stay out, as chat's do.
 */
import type { Env } from "../env";
import type { DoorEndpoint } from "./door-endpoints";
import type { AttemptSample } from "./metrics";
import { metricsProviderId } from "./candidate-stats";
import { sharesProviderMetrics } from "./credentials";
import { reportAttempts } from "./live-metrics";
import type { Continent } from "./regions";

/** How a failed attempt counts: against uptime when the provider is at fault (network, timeout, 429, 5xx), not when the request was. */
export const outcomeOfStatus = (status: number): AttemptSample["outcome"] => (status === 0 || status === 408 || status === 429 || status >= 500 ? "error" : "client_error");

/** The samples of one door request, reported once it ends (success or not). */
export class DoorSamples {
  private readonly samples: AttemptSample[] = [];

  /** One attempt at endpoint `e` for the canonical model `modelId` (the series door-endpoints.ts ranks by). */
  add(e: Pick<DoorEndpoint, "provider" | "credential">, modelId: string, outcome: AttemptSample["outcome"], latencyMs: number | null): void {
    if (!sharesProviderMetrics(e.credential)) return;
    const provider = metricsProviderId({ providerId: e.provider.id, credential: e.credential });
    this.samples.push({ provider, model: modelId, at: Date.now(), outcome, ttftMs: outcome === "ok" ? latencyMs : null, outputTokens: 0, generationMs: null });
  }

  report(env: Env, waitUntil: (p: Promise<unknown>) => void, caller: Continent | null | undefined): void {
    reportAttempts(env, waitUntil, this.samples.splice(0), caller ?? null);
  }
}
