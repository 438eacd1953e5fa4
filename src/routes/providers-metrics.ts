/**
 * `GET /v1/providers/metrics`: the live routing metrics per provider and model (uptime,
 * throughput, time to first token) over the last 30 minutes, from the ProviderMetrics object.
 * Public operational data, like a status page; no key needed, so only the public catalogue's
 * providers and models appear (never an organization's custom providers or models).
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-types";
import { metricsStub } from "../durable-objects/provider-metrics";
import { sendQueued } from "../routing/live-metrics";
import { findModel, isProviderId } from "../catalog";

export const providerMetricsRoutes = new Hono<AppEnv>();

const round = (v: number | null, digits: number): number | null => (v === null ? null : Number(v.toFixed(digits)));

providerMetricsRoutes.get("/", async (c) => {
  await sendQueued(c.env); // this isolate's latest attempts first
  const rows = (await metricsStub(c.env).summary()).filter((r) => isProviderId(r.provider) && findModel(r.model) !== undefined);
  rows.sort((a, b) => a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
  return c.json({
    window_minutes: 30,
    data: rows.map((r) => ({
      provider: r.provider,
      model: r.model,
      uptime: round(r.uptime * 100, 2),
      throughput_tokens_per_second: round(r.throughput, 1),
      latency_ms: round(r.latencyMs, 0),
      // Upper edges of histogram bins (src/routing/ttft-histogram.ts); null below 10 samples.
      ttft_p95_ms: r.ttftP95Ms ?? null,
      ttft_p99_ms: r.ttftP99Ms ?? null,
      requests: r.requests,
      errors: r.errors,
    })),
  });
});
