/** @jsxImportSource hono/jsx */
/**
 * Requests page: the request log of the selected project, newest first (src/usage/request-list.ts:
 * the D1 window, else the R2 archive), with filters, paging and a detail view of one request
 * (metadata and routing attempts). Owners and admins see the project; developers their own keys.
 */
import { readBodiesStatus, type BodiesStatus, type StoredBodies } from "../../usage/bodies";
import { RequestBodies } from "./request-bodies";
import { Conversation, RequestTimeline } from "./request-trace";
import { relatedRequests } from "../../usage/conversation";
import type { FC } from "hono/jsx";
import { and, eq } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { apiKeys } from "../../db/schema";
import { formatUsd as picoUsd } from "../../billing/money";
import { publicRecord, type LogRecord } from "../../usage/log-record";
import type { LogScope } from "../../usage/log-export";
import { findRequest, listRequests, type Cursor, type RequestPage } from "../../usage/request-list";
import { PeriodFields } from "./usage";
import { periodDays, periodParam } from "../period";
import { isAdmin, type PageContext } from "../context";
import { Layout, PageHead } from "../layout";
import { compactNumber, formatUsd, usdColumn } from "../format";
import { appDisplayName, normalizeAppName, UNKNOWN_APP } from "../../usage/source-app";
import { MoreFilters } from "./request-filters";

const DAY_MS = 86_400_000;
const text = z.string().trim().max(300);

export const requestsQuery = z.object({
  key: text.optional().catch(undefined),
  model: text.optional().catch(undefined),
  provider: text.optional().catch(undefined),
  status: z.enum(["", "ok", "error"]).or(z.string().regex(/^\d{3}$/)).optional().catch(undefined),
  app: text.optional().catch(undefined),
  user: text.optional().catch(undefined),
  body: z.enum(["", "yes", "no"]).optional().catch(undefined),
  from: periodParam,
  to: periodParam,
  before: z.string().regex(/^\d{1,15}\.[A-Za-z0-9_]*$/).optional().catch(undefined),
});
export type RequestsQuery = z.infer<typeof requestsQuery>;

/** The session's scope in the selected project: a developer's own keys (any status), else every key. */
async function sessionLogScope(env: Env, ctx: PageContext): Promise<{ scope: LogScope & { projectId: string }; keys: Map<string, string>; memberId: string | null } | null> {
  if (!ctx.project) return null;
  const admin = isAdmin(ctx.session);
  const where = admin ? eq(apiKeys.projectId, ctx.project.id) : and(eq(apiKeys.projectId, ctx.project.id), eq(apiKeys.createdBy, ctx.session.memberId));
  const rows = await getDb(env.DB).select({ id: apiKeys.id, description: apiKeys.description }).from(apiKeys).where(where);
  const keys = new Map(rows.map((r) => [r.id, r.description || r.id]));
  const scope: LogScope & { projectId: string } = { organizationId: ctx.session.organizationId, projectId: ctx.project.id };
  if (!admin) scope.keyIds = new Set(keys.keys());
  return { scope, keys, memberId: admin ? null : ctx.session.memberId };
}

/** The Usage page's download: the same scope as the request log. */
export async function downloadScope(env: Env, ctx: PageContext): Promise<LogScope | null> {
  return (await sessionLogScope(env, ctx))?.scope ?? null;
}

/** A period the page refuses comes back with the filters as sent, so the form can correct it. */
export type RequestsData = { page: RequestPage; keys: Map<string, string>; q: RequestsQuery; from: string; to: string } | { error: string; keys: Map<string, string>; q: RequestsQuery } | null;

export async function loadRequests(env: Env, ctx: PageContext, q: RequestsQuery): Promise<RequestsData> {
  const s = await sessionLogScope(env, ctx);
  if (!s) return null;
  const now = Date.now();
  const period = periodDays(q);
  if (!period.ok) return { error: period.message, keys: s.keys, q };
  const to = period.to ?? new Date(now).toISOString().slice(0, 10);
  const from = period.from ?? new Date(Date.parse(to) - DAY_MS).toISOString().slice(0, 10);
  const fromMs = Date.parse(from);
  const toMs = Date.parse(to) + DAY_MS;
  if (fromMs >= toMs) return { error: "'From' must not be after 'To'.", keys: s.keys, q };
  if (toMs - fromMs > 31 * DAY_MS) return { error: "The period is at most 31 days.", keys: s.keys, q };
  let cursor: Cursor | null = null;
  if (q.before) {
    const [at, id] = q.before.split(".");
    cursor = { at: Number(at), id: id ?? "" };
  }
  const filters = {
    keyId: q.key || undefined,
    model: q.model || undefined,
    provider: q.provider || undefined,
    status: q.status || undefined,
    app: q.app ? normalizeAppName(q.app) : undefined,
    endUser: q.user || undefined,
    hasBody: q.body ? q.body === "yes" : undefined,
  };
  const page = await listRequests(env, s.scope, { ...filters, from: fromMs, to: toMs }, cursor, s.memberId, now);
  return { page, keys: s.keys, q, from, to };
}

export type RequestDetail = { record: LogRecord; keyName: string; bodies: StoredBodies | null; bodiesStatus: BodiesStatus | null; keepsBodies: boolean; related: Awaited<ReturnType<typeof relatedRequests>> };

export async function loadRequest(env: Env, ctx: PageContext, id: string, at: number | null): Promise<RequestDetail | null> {
  const s = await sessionLogScope(env, ctx);
  if (!s) return null;
  const record = await findRequest(env, s.scope, id, at);
  if (!record) return null;
  const [{ bodies, status }, project, related] = await Promise.all([
    readBodiesStatus(env, record),
    env.DB.prepare("SELECT log_bodies FROM projects WHERE id = ?1").bind(record.projectId).first<{ log_bodies: number }>(),
    relatedRequests(env, record, s.memberId),
  ]);
  return { record, keyName: s.keys.get(record.apiKeyId) ?? record.apiKeyId, bodies, bodiesStatus: status, keepsBodies: project?.log_bodies === 1, related };
}

const TIME_FMT = new Intl.DateTimeFormat("en-GB", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZone: "UTC" });
const time = (ms: number) => `${TIME_FMT.format(ms)} UTC`;
/** Exact for sub-cent amounts (single requests often cost fractions of a micro-dollar). */
const usd = (pico: number): string => {
  const exact = picoUsd(BigInt(pico));
  return pico !== 0 && Math.abs(pico) < 10_000_000_000 ? `$${exact}` : formatUsd(exact);
};
const withProject = (ctx: PageContext, params: Record<string, string | undefined>): string => {
  const u = new URLSearchParams();
  if (ctx.project) u.set("project", ctx.project.id);
  for (const [k, v] of Object.entries(params)) if (v) u.set(k, v);
  return u.toString();
};
const detailHref = (ctx: PageContext, r: LogRecord) => `/dashboard/requests/${encodeURIComponent(r.id)}?${withProject(ctx, { at: String(r.createdAt) })}`;

const Field: FC<{ id: string; label: string; value: string | undefined }> = ({ id, label, value }) => (
  <div class="field">
    <label for={id}>{label}</label>
    <input id={id} name={id.slice(2)} value={value ?? ""} />
  </div>
);

const Filters: FC<{ ctx: PageContext; q: RequestsQuery; from: string; to: string; keys: Map<string, string> }> = ({ ctx, q, from, to, keys }) => (
  <form method="get" action="/dashboard/requests" class="card inline" aria-label="Filters">
    {ctx.project ? <input type="hidden" name="project" value={ctx.project.id} /> : null}
    <PeriodFields idPrefix="r" from={from} to={to} />
    <div class="field">
      <label for="r-key">Key</label>
      <select id="r-key" name="key">
        <option value="">All keys</option>
        {[...keys].map(([id, name]) => (
          <option value={id} selected={q.key === id}>
            {name}
          </option>
        ))}
      </select>
    </div>
    <Field id="r-model" label="Model" value={q.model} />
    <Field id="r-provider" label="Provider" value={q.provider} />
    <div class="field">
      <label for="r-status">Status</label>
      <select id="r-status" name="status">
        <option value="">Any</option>
        <option value="ok" selected={q.status === "ok"}>
          Succeeded
        </option>
        <option value="error" selected={q.status === "error"}>
          Failed
        </option>
      </select>
    </div>
    <MoreFilters q={q} />
    <button class="primary" type="submit">
      Show
    </button>
  </form>
);

export const RequestsPage: FC<{ ctx: PageContext; data: RequestsData }> = ({ ctx, data }) => {
  if (!data || "error" in data) {
    return (
      <Layout title="Requests" ctx={ctx}>
        <PageHead title="Requests" />
        {data ? <Filters ctx={ctx} q={data.q} from={data.q.from ?? ""} to={data.q.to ?? ""} keys={data.keys} /> : null}
        <p class="alert" role="alert">
          {data ? data.error : "This organization has no project yet."}
        </p>
      </Layout>
    );
  }
  const { page, keys, q, from, to } = data;
  // One precision for the whole Cost column (display only; the download has the exact figures).
  const costOf = usdColumn(page.rows.map((r) => r.costPico / 1e12));
  const next = page.next ? `/dashboard/requests?${withProject(ctx, { ...q, from, to, before: `${page.next.at}.${page.next.id}` })}` : null;
  return (
    <Layout title="Requests" ctx={ctx}>
      <PageHead title="Requests" sub={`${isAdmin(ctx.session) ? "Every key of the project" : "Keys you created"} · ${from} to ${to} (UTC), newest first`}>
        <a class="btn sm" href={`/dashboard/usage/download?${withProject(ctx, { from, to })}`}>
          Download (NDJSON)
        </a>
      </PageHead>
      <Filters ctx={ctx} q={q} from={from} to={to} keys={keys} />
      <section class="card" aria-label="Requests">
        {page.rows.length ? (
          <div class="table-wrap">
            <table id="requests" class="stack">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Key</th>
                  <th scope="col">App</th>
                  <th scope="col">Model</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="num">Latency</th>
                  <th scope="col" class="num">Tokens</th>
                  <th scope="col" class="num">Cost</th>
                  <th scope="col">Cache</th>
                  <th scope="col">Error</th>
                </tr>
              </thead>
              <tbody>
                {page.rows.map((r) => (
                  <tr data-log-id={r.id} data-request-id={r.requestId}>
                    <td data-label="Time">
                      <a href={detailHref(ctx, r)}>{time(r.createdAt)}</a>
                    </td>
                    <td data-label="Key">{keys.get(r.apiKeyId) ?? r.apiKeyId}</td>
                    <td data-label="App">{appDisplayName(r.sourceApp || UNKNOWN_APP)}</td>
                    <td data-label="Model">{r.usedModel ?? r.requestedModel}</td>
                    <td data-label="Provider">{r.usedProvider ?? r.requestedProvider ?? "—"}</td>
                    <td data-label="Status">{r.statusCode}</td>
                    <td data-label="Latency" class="num">{r.latencyMs === null ? "—" : `${compactNumber(r.latencyMs)} ms`}</td>
                    <td data-label="Tokens" class="num">{compactNumber(r.totalTokens)}</td>
                    <td data-label="Cost" class="num">{costOf(r.costPico / 1e12)}</td>
                    <td data-label="Cache">{r.cached ? "hit" : "—"}</td>
                    <td data-label="Error">{r.errorType ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p class="empty">No requests match.</p>
        )}
        {next ? (
          <p>
            <a class="btn sm" href={next} rel="next">
              Older requests
            </a>
          </p>
        ) : null}
      </section>
      <p class="muted small">
        {page.source === "window" ? "Recent requests, from the gateway's request log." : "Read from the request archive (R2), hour by hour."} Requests appear a few seconds after they end.
      </p>
    </Layout>
  );
};

const Row: FC<{ label: string; value: string }> = ({ label, value }) => (
  <tr>
    <th scope="row">{label}</th>
    <td>{value}</td>
  </tr>
);

export const RequestDetailPage: FC<{ ctx: PageContext; data: RequestDetail | null }> = ({ ctx, data }) => {
  if (!data) {
    return (
      <Layout title="Request" ctx={ctx}>
        <PageHead title="Request" />
        <p class="alert" role="alert">
          No such request in this project (or it is no longer kept).
        </p>
      </Layout>
    );
  }
  const r = data.record;
  return (
    <Layout title="Request" ctx={ctx}>
      <PageHead title="Request" sub={`${r.requestId} · ${time(r.createdAt)}`}>
        <a class="btn sm" href={`/dashboard/requests?${withProject(ctx, {})}`}>
          All requests
        </a>
      </PageHead>
      <section class="card" aria-labelledby="req-summary">
        <h2 id="req-summary">Summary</h2>
        <div class="table-wrap">
          <table>
            <tbody>
              <Row label="Request id" value={r.requestId} />
              <Row label="Log id" value={r.id} />
              <Row label="Key" value={data.keyName} />
              <Row label="Kind" value={r.kind} />
              <Row label="App" value={appDisplayName(r.sourceApp || UNKNOWN_APP)} />
              <Row label="Requested model" value={r.requestedModel} />
              <Row label="Model" value={r.usedModel ?? "—"} />
              <Row label="Provider" value={r.usedProvider ?? r.requestedProvider ?? "—"} />
              <Row label="Status" value={String(r.statusCode)} />
              <Row label="Error" value={[r.errorType, r.errorMessage].filter(Boolean).join(": ") || "—"} />
              <Row label="Finish reason" value={r.finishReason ?? "—"} />
              <Row label="Streamed" value={r.streamed ? "yes" : "no"} />
              <Row label="Cache" value={r.cached ? "hit" : "miss"} />
              <Row label="Client aborted" value={r.clientAborted ? "yes" : "no"} />
              <Row label="Latency" value={r.latencyMs === null ? "—" : `${r.latencyMs} ms`} />
              <Row label="Time to first token" value={r.ttftMs === null ? "—" : `${r.ttftMs} ms`} />
              <Row label="Tokens" value={`${r.promptTokens} prompt · ${r.completionTokens} completion · ${r.reasoningTokens} reasoning · ${r.cachedTokens} cached`} />
              <Row label="Cost" value={`${usd(r.costPico)} (credits ${usd(r.creditsCostPico)} · own keys ${usd(r.byokCostPico)})`} />
            </tbody>
          </table>
        </div>
      </section>
      <RequestBodies bodies={data.bodies} kept={data.keepsBodies} status={data.bodiesStatus} />
      <RequestTimeline record={r} />
      <Conversation related={data.related} current={r.id} href={(x) => detailHref(ctx, x)} />
      <section class="card" aria-labelledby="req-meta">
        <h2 id="req-meta">Metadata</h2>
        {r.extra ? <pre>{JSON.stringify(publicRecord(r).extra, null, 2)}</pre> : <p class="empty">None.</p>}
      </section>
    </Layout>
  );
};
