/**
 * Data of the dashboard's routing section (routing-section.tsx): which regions the project's
 * requests were answered from lately, and the provider health per caller continent (the metrics
 * routing ranks by: one ProviderMetrics object per continent, src/durable-objects/provider-metrics.ts),
 * per endpoint (a provider, or `<provider>@<region>` for a regional one) over every model.
 */
import { and, count, eq, gte } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { requestLogs } from "../../db/schema";
import { metricsStub } from "../../durable-objects/provider-metrics";
import { isProviderId } from "../../catalog";
import { mergeBuckets, splitSeriesKey, summarize, type Bucket, type Series } from "../../routing/metrics";
import { CONTINENTS, type Continent } from "../../routing/regions";

/** How far back "regions in use" looks. */
export const REGIONS_IN_USE_DAYS = 7;

export interface RegionUse {
  provider: string;
  /** "" for a global endpoint. */
  region: string;
  requests: number;
}

/** The (provider, region) pairs that answered the project's requests over the last days, most used first. */
export async function regionsInUse(env: Env, projectId: string, now = Date.now()): Promise<RegionUse[]> {
  const rows = await getDb(env.DB)
    .select({ provider: requestLogs.usedProvider, region: requestLogs.usedRegion, requests: count() })
    .from(requestLogs)
    .where(and(eq(requestLogs.projectId, projectId), gte(requestLogs.createdAt, now - REGIONS_IN_USE_DAYS * 86_400_000)))
    .groupBy(requestLogs.usedProvider, requestLogs.usedRegion)
    .all();
  return rows
    .filter((r): r is { provider: string; region: string | null; requests: number } => r.provider !== null)
    .map((r) => ({ provider: r.provider, region: r.region ?? "", requests: r.requests }))
    .sort((a, b) => b.requests - a.requests || a.provider.localeCompare(b.provider));
}

export interface EndpointHealth {
  uptime: number;
  p50Ms: number | null;
  p95Ms: number | null;
  requests: number;
}

export interface HealthRow {
  provider: string;
  region: string;
  byContinent: Partial<Record<Continent, EndpointHealth>>;
}

/**
 * Health of every public endpoint as each continent's callers saw it over the last 30 minutes. One
 * read per continent object, at once; an object that fails to answer leaves its column empty
 * rather than the page.
 */
export async function healthByContinent(env: Env, now = Date.now()): Promise<HealthRow[]> {
  const snapshots = await Promise.all(CONTINENTS.map((c) => metricsStub(env, c).snapshot(now).then((s): Series => s as Series, (): Series => ({}))));
  const rows = new Map<string, HealthRow>();
  CONTINENTS.forEach((continent, i) => {
    const byEndpoint = new Map<string, Bucket[]>();
    for (const [key, buckets] of Object.entries(snapshots[i] ?? {})) {
      const endpoint = splitSeriesKey(key).provider;
      byEndpoint.set(endpoint, mergeBuckets(byEndpoint.get(endpoint) ?? [], buckets));
    }
    for (const [endpoint, buckets] of byEndpoint) {
      const at = endpoint.indexOf("@");
      const provider = at < 0 ? endpoint : endpoint.slice(0, at);
      if (!isProviderId(provider)) continue;
      const s = summarize(buckets, now);
      if (!s.requests) continue;
      let row = rows.get(endpoint);
      if (!row) rows.set(endpoint, (row = { provider, region: at < 0 ? "" : endpoint.slice(at + 1), byContinent: {} }));
      row.byContinent[continent] = { uptime: s.uptime, p50Ms: s.ttftP50Ms, p95Ms: s.ttftP95Ms ?? null, requests: s.requests };
    }
  });
  return [...rows.values()].sort((a, b) => a.provider.localeCompare(b.provider) || a.region.localeCompare(b.region));
}
