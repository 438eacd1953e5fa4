/**
 * ProviderMetrics: ONE global Durable Object (idFromName("global")) holding the live metrics of
 * every provider+model (src/routing/metrics.ts).
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

export const metricsStub = (env: Env) => env.PROVIDER_METRICS.get(env.PROVIDER_METRICS.idFromName("global"));
