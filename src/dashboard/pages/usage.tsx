/** @jsxImportSource hono/jsx */
/**
 * Usage page: the hourly aggregates through the same report functions and scope rules as the MCP
 * analytics tools (src/usage/analytics.ts): owners and admins see the whole project, developers
 * the keys they created in it (including inactive ones).
 */
import type { FC } from "hono/jsx";
import type { Env } from "../../env";
import { AnalyticsError, getUsageBreakdown, getUsageReport, resolveRange, type AnalyticsScope, type GroupBy, type UsageBreakdown, type UsageReport } from "../../usage/analytics";
import type { PageContext } from "../context";
import { isAdmin } from "../context";
import { Layout, PageHead } from "../layout";
import { BarChart, fillBuckets } from "../charts";
import { compactNumber, usdColumn, formatDate, formatUsd } from "../format";
import { periodDays } from "../period";
import { LatencySection, loadLatency, type LatencyData } from "./usage-latency";

export interface UsageQuery {
  from?: string | undefined;
  to?: string | undefined;
  granularity: "day" | "hour";
}

/** The analytics scope of a dashboard session in the selected project (spec 5.5). */
export function sessionScope(ctx: PageContext): AnalyticsScope | null {
  if (!ctx.project) return null;
  const type = isAdmin(ctx.session) ? "project" : "own_keys";
  return {
    type,
    organizationId: ctx.session.organizationId,
    projectId: ctx.project.id,
    projectName: ctx.project.name,
    memberId: ctx.session.memberId,
    role: ctx.session.role,
    description: type === "project" ? `All API keys of project '${ctx.project.name}'` : `API keys you created in project '${ctx.project.name}' (including inactive keys)`,
  };
}

const RANKINGS: Array<{ by: GroupBy; title: string }> = [
  { by: "provider", title: "Providers" },
  { by: "model", title: "Models" },
  { by: "app", title: "Apps" },
  { by: "api_key", title: "API keys" },
  { by: "end_user", title: "End users" },
];

const RANKING_ROWS = 1000;

export type UsageData = { report: UsageReport; rankings: UsageBreakdown[]; latency?: LatencyData } | { error: string };

export async function loadUsage(env: Env, ctx: PageContext, q: UsageQuery): Promise<UsageData | null> {
  const scope = sessionScope(ctx);
  if (!scope) return null;
  const days = periodDays(q);
  if (!days.ok) return { error: days.message };
  try {
    // Hourly charts default to the last two days (30 days of hours are too thin to read).
    const to = days.to ?? new Date().toISOString().slice(0, 10);
    const toMs = Date.parse(to);
    const from = days.from ?? (q.granularity === "hour" && !Number.isNaN(toMs) ? new Date(toMs - 86_400_000).toISOString().slice(0, 10) : undefined);
    const range = { from, to };
    const period = resolveRange(range, "day");
    const [latency, report, ...rankings] = await Promise.all([
      loadLatency(env, scope, period),
      getUsageReport(env, scope, { ...range, granularity: q.granularity }),
      // Every group (the table pages, sorts and exports them in the browser), up to a sane bound.
      ...RANKINGS.map((r) => getUsageBreakdown(env, scope, { ...range, groupBy: r.by, limit: RANKING_ROWS })),
    ]);
    return { report, rankings, latency };
  } catch (err) {
    if (err instanceof AnalyticsError) return { error: err.message };
    throw err;
  }
}

const Stat: FC<{ label: string; value: string; sub?: string }> = ({ label, value, sub }) => (
  <div class="stat">
    <div class="label">{label}</div>
    <div class="value">{value}</div>
    {sub ? <div class="sub">{sub}</div> : null}
  </div>
);

/** The From / To (UTC days) fields of a period form (Usage, Requests). */
export const PeriodFields: FC<{ idPrefix: string; from: string; to: string }> = ({ idPrefix, from, to }) => (
  <>
    <div class="field">
      <label for={`${idPrefix}-from`}>From (UTC)</label>
      <input id={`${idPrefix}-from`} type="date" name="from" value={from} />
    </div>
    <div class="field">
      <label for={`${idPrefix}-to`}>To (UTC)</label>
      <input id={`${idPrefix}-to`} type="date" name="to" value={to} />
    </div>
  </>
);

const Filters: FC<{ ctx: PageContext; q: UsageQuery; from: string; to: string }> = ({ ctx, q, from, to }) => (
  <form method="get" action="/dashboard/usage" class="card inline" aria-label="Period">
    {ctx.project ? <input type="hidden" name="project" value={ctx.project.id} /> : null}
    <PeriodFields idPrefix="u" from={from} to={to} />
    <div class="field">
      <label for="u-gran">Granularity</label>
      <select id="u-gran" name="granularity">
        <option value="day" selected={q.granularity === "day"}>
          By day
        </option>
        <option value="hour" selected={q.granularity === "hour"}>
          By hour
        </option>
      </select>
    </div>
    <button class="primary" type="submit">
      Show
    </button>
  </form>
);

const Ranking: FC<{ title: string; data: UsageBreakdown }> = ({ title, data }) => {
  const costOf = usdColumn(data.rows.map((r) => Number(r.costUsd)));
  return (
  <section class="card" aria-labelledby={`rank-${data.groupBy}`}>
    <h2 id={`rank-${data.groupBy}`}>{title}</h2>
    {data.rows.length ? (
      <div class="table-wrap">
        <table class="stack" data-enhance data-page-size="10" data-csv={`usage-${data.groupBy}-${data.period.from}-to-${data.period.to}.csv`} aria-label={title}>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Name</th>
              <th scope="col" class="num">
                Requests
              </th>
              <th scope="col" class="num">
                Tokens
              </th>
              <th scope="col" class="num">
                Cost
              </th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((r) => (
              <tr>
                <td data-label="#">{r.rank}</td>
                <td data-label="Name">{r.name}</td>
                <td data-label="Requests" class="num" data-sort={String(r.requests)}>
                  {compactNumber(r.requests)}
                </td>
                <td data-label="Tokens" class="num" data-sort={String(r.tokens.total)}>
                  {compactNumber(r.tokens.total)}
                </td>
                <td data-label="Cost" class="num" data-sort={r.costUsd}>
                  {costOf(Number(r.costUsd))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    ) : (
      <p class="empty">No requests in this period.</p>
    )}
  </section>
  );
};

/** The period's raw request records (src/dashboard/routes.tsx `/usage/download`), at most 31 days. */
const DownloadLinks: FC<{ ctx: PageContext; from: string; to: string }> = ({ ctx, from, to }) => {
  const end = new Date(Date.parse(to) + 86_400_000).toISOString().slice(0, 10);
  const start = Date.parse(end) - Date.parse(from) > 31 * 86_400_000 ? new Date(Date.parse(end) - 31 * 86_400_000).toISOString().slice(0, 10) : from;
  const q = (format: string) => `/dashboard/usage/download?${new URLSearchParams({ ...(ctx.project ? { project: ctx.project.id } : {}), from: start, to: end, format }).toString()}`;
  return (
    <p class="small" id="usage-download">
      Download the requests of {start} to {to}: <a href={q("ndjson")}>NDJSON</a> · <a href={q("csv")}>CSV</a>
    </p>
  );
};

const usd = (n: number): string => (n === 0 ? "$0" : formatUsd(n.toFixed(6)));

export const UsagePage: FC<{ ctx: PageContext; q: UsageQuery; data: UsageData | null }> = ({ ctx, q, data }) => {
  if (!data || "error" in data) {
    // A period the report refuses (e.g. a reversed range): the form again, with the reason, to fix it.
    return (
      <Layout title="Usage" ctx={ctx}>
        <PageHead title="Usage" />
        {data ? <Filters ctx={ctx} q={q} from={q.from ?? ""} to={q.to ?? ""} /> : null}
        <p class="alert" role="alert" id="usage-error">
          {data ? data.error : "This organization has no project yet."}
        </p>
      </Layout>
    );
  }
  const { report, rankings, latency } = data;
  const range = resolveRange({ from: report.period.from, to: report.period.to }, q.granularity);
  const fill = (pick: (p: UsageReport["series"][number]) => number[], width: number) =>
    fillBuckets(report.series.map((p) => ({ start: p.start, values: pick(p) })), range.fromMs, Math.min(range.toMs, Date.now() + 3_600_000), q.granularity, width);
  const t = report.totals;
  return (
    <Layout title="Usage" ctx={ctx}>
      <PageHead title="Usage" sub={`${report.scope.description} · ${report.period.from} to ${report.period.to} (UTC)`} />
      <Filters ctx={ctx} q={q} from={report.period.from} to={report.period.to} />
      <div class="stats">
        <Stat label="Requests" value={compactNumber(t.requests)} />
        <Stat label="Cost" value={formatUsd(t.costUsd)} sub={`credits ${formatUsd(t.creditsCostUsd)} · own keys ${formatUsd(t.byokCostUsd)}`} />
        <Stat label="Tokens" value={compactNumber(t.tokens.total)} sub={`${compactNumber(t.tokens.prompt)} in · ${compactNumber(t.tokens.completion)} out`} />
        <Stat label="Errors" value={compactNumber(t.errors)} />
        <Stat label="Cache hits" value={compactNumber(t.cacheHits)} />
        {t.hedgedRequests > 0 ? <Stat label="Hedged requests" value={compactNumber(t.hedgedRequests)} sub={`cancelled hedges cost ${formatUsd(t.hedgeCostUsd)}`} /> : null}
      </div>
      <div class="grid wide">
        <BarChart id="c-req" title="Requests" series={["Requests"]} granularity={q.granularity} buckets={fill((p) => [p.requests], 1)} />
        <BarChart
          id="c-cost"
          title="Cost (USD)"
          series={["Credits", "Own keys"]}
          granularity={q.granularity}
          format={usd}
          buckets={fill((p) => [Number(p.creditsCostUsd), Number(p.byokCostUsd)], 2)}
        />
        <BarChart id="c-tok" title="Tokens" series={["Prompt", "Completion"]} granularity={q.granularity} buckets={fill((p) => [p.tokens.prompt, p.tokens.completion], 2)} />
        <BarChart id="c-err" title="Errors and cache hits" series={["Errors", "Cache hits"]} classes={["bar-bad", "bar-ok"]} granularity={q.granularity} buckets={fill((p) => [p.errors, p.cacheHits], 2)} />
      </div>
      {latency ? <LatencySection data={latency} /> : null}
      <div class="grid wide">
        {rankings.map((r, i) => (
          <Ranking title={RANKINGS[i]!.title} data={r} />
        ))}
      </div>
      <p class="muted small">
        {report.note} Last aggregated: {formatDate(report.updatedAt, "not yet")}.
      </p>
      <DownloadLinks ctx={ctx} from={report.period.from} to={report.period.to} />
    </Layout>
  );
};
