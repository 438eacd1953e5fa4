/**
 * ProviderMetrics: the live metrics of every provider+model (src/routing/metrics.ts), in one global
 * Durable Object (idFromName("global"), every caller) and one per caller continent
 * (idFromName("continent:EU"), ...; the same class, created near its callers with a location hint)
 * holding only the attempts of callers on that continent. Routing ranks a caller's endpoints by its
 * continent's series (a Tokyo caller's time to first token from us-east-1 is not a Frankfurt
 * caller's); the global one answers GET /v1/providers/metrics and judges provider health.
 *
 * Why one object and not one per provider: routing compares providers, so every isolate needs all
 * of them at once; a single object answers that with one call every few seconds per isolate
 * instead of one per provider. Writes are one small RPC per chat request, sent from waitUntil
 * (never on the hot path); a Durable Object handles a few thousand such calls per second, and the
 * data are buckets of counters, so sharding by provider later only changes `metricsStub`.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { checkProviderHealth } from "../integrations/provider-health";
import { addSample, prune, splitSeriesKey, seriesKey, summarize, type AttemptSample, type Series, type StatsSummary } from "../routing/metrics";
import type { Continent } from "../routing/regions";

/** Which object: every caller's, or one continent's callers'. */
export type MetricsScope = "global" | Continent;

const STORAGE_KEY = "series";
/** Providers judged down (src/integrations/provider-health.ts). */
const DOWN_KEY = "down";
/** Metrics are persisted at most this often (an evicted object loses at most this much history). */
const PERSIST_EVERY_MS = 5_000;

export interface MetricsRow extends StatsSummary {
  provider: string;
  model: string;
}

export class ProviderMetrics extends DurableObject<Env> {
  private series: Series | null = null;
  private persistScheduled = false;

  private async load(): Promise<Series> {
    if (!this.series) this.series = (await this.ctx.storage.get<Series>(STORAGE_KEY)) ?? {};
    return this.series;
  }

  /** Records finished upstream attempts (called from waitUntil after each request). */
  async record(samples: AttemptSample[]): Promise<void> {
    const series = await this.load();
    for (const s of samples) {
      const key = seriesKey(s.provider, s.model);
      series[key] = addSample(series[key] ?? [], s);
    }
    // Serializing every series on every request is the expensive part; batch it on an alarm.
    if (!this.persistScheduled) {
      this.persistScheduled = true;
      await this.ctx.storage.setAlarm(Date.now() + PERSIST_EVERY_MS);
    }
  }

  override async alarm(): Promise<void> {
    this.persistScheduled = false;
    if (!this.series) return;
    await this.ctx.storage.put(STORAGE_KEY, this.series);
    // A continent's object sees a share of the traffic: health (and its webhooks) is the global one's.
    if (!this.ctx.id.equals(this.env.PROVIDER_METRICS.idFromName(GLOBAL_NAME))) return;
    // Provider health for the provider.down / provider.recovered webhooks, at the same pace.
    const before = new Set((await this.ctx.storage.get<string[]>(DOWN_KEY)) ?? []);
    const after = await checkProviderHealth(this.env, this.series, before, Date.now());
    if (after.size !== before.size || [...after].some((p) => !before.has(p))) await this.ctx.storage.put(DOWN_KEY, [...after]);
  }

  /** Raw buckets of the window, for isolate snapshots. */
  async snapshot(now = Date.now()): Promise<Series> {
    const series = await this.load();
    for (const [k, b] of Object.entries(series)) {
      prune(b, now);
      if (b.length === 0) delete series[k];
    }
    return series;
  }

  /** Summaries per provider+model (GET /v1/providers/metrics). */
  async summary(now = Date.now()): Promise<MetricsRow[]> {
    const series = await this.snapshot(now);
    return Object.entries(series).map(([k, b]) => ({ ...splitSeriesKey(k), ...summarize(b, now) }));
  }
}

const GLOBAL_NAME = "global";

/**
 * Where each continent's object is created (Durable Object location hints): near the callers that
 * write to it and the isolates that read it, so its refreshes stay short.
 */
const LOCATION_HINT: Readonly<Record<Continent, DurableObjectLocationHint>> = {
  NA: "enam", SA: "sam", EU: "weur", AF: "afr", AS: "apac", OC: "oc",
};

export const metricsStub = (env: Env, scope: MetricsScope = "global") =>
  scope === "global"
    ? env.PROVIDER_METRICS.get(env.PROVIDER_METRICS.idFromName(GLOBAL_NAME))
    : env.PROVIDER_METRICS.get(env.PROVIDER_METRICS.idFromName(`continent:${scope}`), { locationHint: LOCATION_HINT[scope] });
