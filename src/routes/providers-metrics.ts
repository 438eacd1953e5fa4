/**
 * `GET /v1/providers/metrics`: the live routing metrics per provider and model (uptime,
 * throughput, time to first token) over the last 30 minutes, from the ProviderMetrics object.
 * Public operational data, like a status page; no key needed, so only the public catalogue's
 * providers and models appear (never an organization's custom providers or models).
 * `?continent=EU` (NA, SA, EU, AF, AS, OC) reads the series of callers on that continent instead of
 * every caller's: what routing ranks that continent's requests by.
 */
import { Hono } from "hono";
import * as z from "zod";
import { validate } from "../errors/validation";
import { CONTINENTS } from "../routing/regions";
import type { AppEnv } from "../app-types";
import { metricsStub } from "../durable-objects/provider-metrics";
import { sendQueued } from "../routing/live-metrics";
import { findModel, isProviderId } from "../catalog";

export const providerMetricsRoutes = new Hono<AppEnv>();

const round = (v: number | null, digits: number): number | null => (v === null ? null : Number(v.toFixed(digits)));

const endpointOf = (series: string): { provider: string; region: string } => {
  const at = series.indexOf("@");
  return at < 0 ? { provider: series, region: "" } : { provider: series.slice(0, at), region: series.slice(at + 1) };
};

const metricsQuery = z.object({ continent: z.enum(CONTINENTS).optional() });

providerMetricsRoutes.get("/", validate("query", metricsQuery), async (c) => {
  const { continent } = c.req.valid("query");
  await sendQueued(c.env); // this isolate's latest attempts first
  // A regional endpoint's series is `<provider>@<region>` (src/routing/candidate-stats.ts).
  const rows = (await metricsStub(c.env, continent ?? "global").summary())
    .map((r) => ({ ...r, ...endpointOf(r.provider) }))
    .filter((r) => isProviderId(r.provider) && findModel(r.model) !== undefined);
  rows.sort((a, b) => a.provider.localeCompare(b.provider) || a.region.localeCompare(b.region) || a.model.localeCompare(b.model));
  return c.json({
    window_minutes: 30,
    continent: continent ?? null,
    data: rows.map((r) => ({
      provider: r.provider,
      /** The endpoint's region; "" for the provider's default endpoint. */
      region: r.region,
      model: r.model,
      uptime: round(r.uptime * 100, 2),
      throughput_tokens_per_second: round(r.throughput, 1),
      latency_ms: round(r.latencyMs, 0),
      // Interpolated inside their histogram bin, capped by the slowest sample (src/routing/ttft-histogram.ts); null below 10 samples.
      ttft_p50_ms: r.ttftP50Ms,
      ttft_p95_ms: r.ttftP95Ms ?? null,
      ttft_p99_ms: r.ttftP99Ms ?? null,
      requests: r.requests,
      errors: r.errors,
    })),
  });
});
