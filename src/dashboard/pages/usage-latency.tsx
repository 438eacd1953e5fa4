/** @jsxImportSource hono/jsx */
/**
 * The Usage page's latency section: p50/p95 time to first token and total latency per model and
 * per provider over the period, from the hourly aggregates' histograms (src/usage/latency.ts).
 */
import type { FC } from "hono/jsx";
import type { Env } from "../../env";
import type { AnalyticsScope } from "../../usage/analytics";
import { latencyByGroup, type LatencyRow, type Percentile } from "../../usage/latency";
import { findModel, getProvider } from "../../catalog/index";
import { REFUSED } from "../../usage/aggregate";
import { compactNumber } from "../format";
import { DataTable } from "../table";

export interface LatencyData {
  model: LatencyRow[];
  provider: LatencyRow[];
}

export async function loadLatency(env: Env, scope: AnalyticsScope, period: { fromMs: number; toMs: number }): Promise<LatencyData> {
  const [model, provider] = await Promise.all([latencyByGroup(env, scope, period, "model"), latencyByGroup(env, scope, period, "provider")]);
  return { model: model.filter((r) => r.id !== REFUSED), provider: provider.filter((r) => r.id !== REFUSED) };
}

const ms = (p: Percentile | null): string => {
  if (!p) return "—";
  const v = p.ms >= 1000 ? `${(p.ms / 1000).toFixed(p.ms >= 10_000 ? 0 : 1)} s` : `${p.ms} ms`;
  return p.over ? `> ${v}` : v;
};

const Table: FC<{ title: string; rows: LatencyRow[]; name: (id: string) => string; id: string }> = ({ title, rows, name, id }) => (
  <section class="card" aria-labelledby={id}>
    <h2 id={id}>{title}</h2>
    <DataTable
      caption={title}
      head={["Name", "Requests", "TTFT p50", "TTFT p95", "Latency p50", "Latency p95"]}
      rows={rows}
      cells={(r) => [name(r.id), compactNumber(r.measured), ms(r.ttftP50), ms(r.ttftP95), ms(r.p50), ms(r.p95)]}
      empty="No answered requests in this period."
    />
  </section>
);

export const LatencySection: FC<{ data: LatencyData }> = ({ data }) => (
  <>
    <div class="grid wide" id="usage-latency">
      <Table title="Latency by model" id="lat-model" rows={data.model} name={(id) => findModel(id)?.name ?? id} />
      <Table title="Latency by provider" id="lat-provider" rows={data.provider} name={(id) => getProvider(id)?.name ?? id} />
    </div>
    <p class="muted small">
      Answered requests that reached a provider (no errors, no cache hits). Percentiles are estimated from the hourly aggregates' latency buckets (exact to the bucket).
    </p>
  </>
);
