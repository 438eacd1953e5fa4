/**
 * Usage analytics for the MCP tools (spec 2.8, 5.5). Reads ONLY `usage_hourly` (plus the
 * aggregation bookkeeping and, for access checks and display names, keys/members/projects), so
 * results survive request-log retention. Money is summed by SQL in integer pico-dollars and read
 * as text into bigint; it leaves as decimal strings.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb, inSlices, type Db } from "../db/client";
import { apiKeys, members, organizations, users } from "../db/schema";
import { formatUsd } from "../billing/money";
import { getProvider, findModel } from "../catalog/index";
import { readAggregationState, HOUR_MS, REFUSED } from "./aggregate";
import { appDisplayName, normalizeAppName, UNKNOWN_APP } from "./source-app";

export { AnalyticsError, DEFAULT_RANGE_DAYS, MAX_HOURLY_RANGE_DAYS, MAX_RANGE_DAYS, resolveAnalyticsScope, resolveRange } from "./analytics-scope";
export type { AnalyticsErrorKind, AnalyticsScope, DateRange } from "./analytics-scope";
import { AnalyticsError, DAY_MS, resolveRange, scopeFilter, type AnalyticsScope, type DateRange } from "./analytics-scope";

// ---------- sums ----------

export interface TokenTotals {
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
  total: number;
}

export interface UsageTotals {
  requests: number;
  errors: number;
  cacheHits: number;
  tokens: TokenTotals;
  costUsd: string;
  creditsCostUsd: string;
  byokCostUsd: string;
  dataStorageCostUsd: string;
  /** Requests whose hedge lost to the other attempt, and what the cancelled attempts cost (src/usage/hedging.ts). */
  hedgedRequests: number;
  hedgeCostUsd: string;
}

interface SumRow {
  requests: string;
  errors: string;
  cache_hits: string;
  prompt_tokens: string;
  completion_tokens: string;
  reasoning_tokens: string;
  cached_tokens: string;
  total_tokens: string;
  cost: string;
  credits_cost: string;
  byok_cost: string;
  storage_cost: string;
  hedged: string;
  hedge_cost: string;
}

const SUMS = sql.raw(`
  CAST(COALESCE(SUM(requests), 0) AS TEXT) AS requests,
  CAST(COALESCE(SUM(errors), 0) AS TEXT) AS errors,
  CAST(COALESCE(SUM(cache_hits), 0) AS TEXT) AS cache_hits,
  CAST(COALESCE(SUM(prompt_tokens), 0) AS TEXT) AS prompt_tokens,
  CAST(COALESCE(SUM(completion_tokens), 0) AS TEXT) AS completion_tokens,
  CAST(COALESCE(SUM(reasoning_tokens), 0) AS TEXT) AS reasoning_tokens,
  CAST(COALESCE(SUM(cached_tokens), 0) AS TEXT) AS cached_tokens,
  CAST(COALESCE(SUM(total_tokens), 0) AS TEXT) AS total_tokens,
  CAST(COALESCE(SUM(cost_pico), 0) AS TEXT) AS cost,
  CAST(COALESCE(SUM(credits_cost_pico), 0) AS TEXT) AS credits_cost,
  CAST(COALESCE(SUM(byok_cost_pico), 0) AS TEXT) AS byok_cost,
  CAST(COALESCE(SUM(data_storage_cost_pico), 0) AS TEXT) AS storage_cost,
  CAST(COALESCE(SUM(hedged_requests), 0) AS TEXT) AS hedged,
  CAST(COALESCE(SUM(hedge_cost_pico), 0) AS TEXT) AS hedge_cost
`);

/** Sums in exact units (bigint), so merged groups add up without loss. */
interface Sums {
  requests: bigint;
  errors: bigint;
  cacheHits: bigint;
  prompt: bigint;
  completion: bigint;
  reasoning: bigint;
  cached: bigint;
  total: bigint;
  cost: bigint;
  credits: bigint;
  byok: bigint;
  storage: bigint;
  hedged: bigint;
  hedgeCost: bigint;
}

const big = (v: string | number | null | undefined): bigint => (v === null || v === undefined ? 0n : BigInt(v));

function toSums(r: SumRow): Sums {
  return {
    requests: big(r.requests),
    errors: big(r.errors),
    cacheHits: big(r.cache_hits),
    prompt: big(r.prompt_tokens),
    completion: big(r.completion_tokens),
    reasoning: big(r.reasoning_tokens),
    cached: big(r.cached_tokens),
    total: big(r.total_tokens),
    cost: big(r.cost),
    credits: big(r.credits_cost),
    byok: big(r.byok_cost),
    storage: big(r.storage_cost),
    hedged: big(r.hedged),
    hedgeCost: big(r.hedge_cost),
  };
}

const zeroSums = (): Sums => ({
  requests: 0n, errors: 0n, cacheHits: 0n, prompt: 0n, completion: 0n, reasoning: 0n, cached: 0n, total: 0n,
  cost: 0n, credits: 0n, byok: 0n, storage: 0n, hedged: 0n, hedgeCost: 0n,
});

function addSums(a: Sums, b: Sums): Sums {
  return {
    requests: a.requests + b.requests,
    errors: a.errors + b.errors,
    cacheHits: a.cacheHits + b.cacheHits,
    prompt: a.prompt + b.prompt,
    completion: a.completion + b.completion,
    reasoning: a.reasoning + b.reasoning,
    cached: a.cached + b.cached,
    total: a.total + b.total,
    cost: a.cost + b.cost,
    credits: a.credits + b.credits,
    byok: a.byok + b.byok,
    storage: a.storage + b.storage,
    hedged: a.hedged + b.hedged,
    hedgeCost: a.hedgeCost + b.hedgeCost,
  };
}

function toTotals(s: Sums): UsageTotals {
  return {
    requests: Number(s.requests),
    errors: Number(s.errors),
    cacheHits: Number(s.cacheHits),
    tokens: {
      prompt: Number(s.prompt),
      completion: Number(s.completion),
      reasoning: Number(s.reasoning),
      cached: Number(s.cached),
      total: Number(s.total),
    },
    costUsd: formatUsd(s.cost),
    creditsCostUsd: formatUsd(s.credits),
    byokCostUsd: formatUsd(s.byok),
    dataStorageCostUsd: formatUsd(s.storage),
    hedgedRequests: Number(s.hedged),
    hedgeCostUsd: formatUsd(s.hedgeCost),
  };
}

// ---------- grouping ----------

/** `end_user`: the app's end user of session keys (src/platform/); other keys rank as `unknown`. */
export type GroupBy = "provider" | "model" | "app" | "api_key" | "end_user";
export type SortBy = "requests" | "cost" | "tokens";

const GROUP_COLUMN: Record<GroupBy, string> = {
  provider: "provider",
  model: "model",
  app: "source_app",
  api_key: "api_key_id",
  // The session key's end user, looked up per aggregate row (no join: the scope filter names usage_hourly's columns).
  end_user: "(SELECT k.end_user_id FROM api_keys AS k WHERE k.id = usage_hourly.api_key_id)",
};

/** Grouped sums, with app aliases merged and `unknown` for empty values. */
async function groupedSums(db: Db, scope: AnalyticsScope, range: DateRange, groupBy: GroupBy): Promise<Map<string, Sums>> {
  const col = sql.raw(GROUP_COLUMN[groupBy]);
  const rows = await db.all<SumRow & { g: string | null }>(sql`
    SELECT ${col} AS g, ${SUMS} FROM usage_hourly
    WHERE ${scopeFilter(scope)} AND hour_start >= ${range.fromMs} AND hour_start < ${range.toMs}
    GROUP BY ${col}
  `);
  const out = new Map<string, Sums>();
  for (const r of rows) {
    const raw = r.g ?? "";
    const id = groupBy === "app" ? normalizeAppName(raw) : raw || UNKNOWN_APP;
    out.set(id, addSums(out.get(id) ?? zeroSums(), toSums(r)));
  }
  return out;
}

const sortValue = (s: Sums, by: SortBy): bigint => (by === "cost" ? s.cost : by === "tokens" ? s.total : s.requests);

function rank(groups: Map<string, Sums>, by: SortBy): Array<[string, Sums]> {
  return [...groups.entries()].sort(([ia, a], [ib, b]) => {
    const va = sortValue(a, by);
    const vb = sortValue(b, by);
    if (va !== vb) return va > vb ? -1 : 1;
    return ia < ib ? -1 : ia > ib ? 1 : 0;
  });
}

async function displayNames(db: Db, scope: AnalyticsScope, groupBy: GroupBy, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (groupBy === "api_key") {
    // A page of ids ranked in code (up to 100 through MCP): sliced, as the organization's id is
    // bound too and D1 binds at most 100 parameters per statement.
    const rows = await inSlices(ids, 1, (slice) =>
      db
        .select({ id: apiKeys.id, description: apiKeys.description, prefixHint: apiKeys.prefixHint })
        .from(apiKeys)
        .where(and(eq(apiKeys.organizationId, scope.organizationId), inArray(apiKeys.id, slice))),
    );
    for (const r of rows) names.set(r.id, r.description || r.prefixHint);
    for (const id of ids) if (!names.has(id)) names.set(id, "Deleted key");
    return names;
  }
  if (groupBy === "end_user") {
    for (const id of ids) names.set(id, id === UNKNOWN_APP ? "No end user (API keys)" : id);
    return names;
  }
  for (const id of ids) {
    const name =
      groupBy === "provider" ? getProvider(id)?.name : groupBy === "model" ? findModel(id)?.name : appDisplayName(id);
    names.set(id, name ?? (id === REFUSED ? "Refused (not sent to a provider)" : id === UNKNOWN_APP ? "Unknown" : id));
  }
  return names;
}

export interface RankedEntry {
  id: string;
  name: string;
  requests: number;
}

export interface Coverage {
  complete: boolean;
  recordedRequests: number;
  totalRequests: number;
}

/**
 * Spec 2.8: the requests the rankings account for (every group, `unknown` included, since those
 * requests are ranked as `unknown`) against the period's total; `complete: false` only when the
 * rankings cover part of the period.
 */
function coverageOf(groups: Map<string, Sums>, totalRequests: bigint): Coverage {
  let recorded = 0n;
  for (const s of groups.values()) recorded += s.requests;
  return { complete: recorded >= totalRequests, recordedRequests: Number(recorded), totalRequests: Number(totalRequests) };
}

async function mostUsed(db: Db, scope: AnalyticsScope, groupBy: GroupBy, groups: Map<string, Sums>): Promise<RankedEntry | null> {
  const top = rank(groups, "requests")[0];
  if (!top || top[1].requests === 0n) return null;
  const names = await displayNames(db, scope, groupBy, [top[0]]);
  return { id: top[0], name: names.get(top[0]) ?? top[0], requests: Number(top[1].requests) };
}

async function lastAggregation(db: Db, range: DateRange): Promise<string | null> {
  const state = await readAggregationState(db);
  if (state && range.toMs > state.aggregatedUntil) return new Date(state.updatedAt).toISOString();
  const rows = await db.all<{ t: number | null }>(
    sql`SELECT MAX(updated_at) AS t FROM usage_hourly WHERE hour_start >= ${range.fromMs} AND hour_start < ${range.toMs}`,
  );
  const t = rows[0]?.t ?? state?.updatedAt ?? null;
  return t === null ? null : new Date(t).toISOString();
}

/** Runs a read, turning any store failure into the `unavailable` tool error (never a zero report). */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AnalyticsError) throw err;
    // First line only: drizzle puts the whole statement and its parameters in the message.
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
    console.error("analytics query failed:", cause.split("\n")[0]);
    throw new AnalyticsError("unavailable", "The analytics store is unavailable right now; try again shortly.");
  }
}

const scopeView = (s: AnalyticsScope) => ({
  type: s.type,
  organizationId: s.organizationId,
  projectId: s.projectId,
  projectName: s.projectName,
  role: s.role,
  description: s.description,
});

// ---------- get-usage ----------

export interface UsageReport {
  scope: ReturnType<typeof scopeView>;
  period: { from: string; to: string; granularity: "day" | "hour"; timezone: "UTC" };
  updatedAt: string | null;
  totals: UsageTotals;
  series: Array<UsageTotals & { start: string }>;
  mostUsedProvider: RankedEntry | null;
  mostUsedModel: RankedEntry | null;
  mostUsedApp: RankedEntry | null;
  appUsageCoverage: Coverage;
  note: string;
}

const NOTE =
  "Usage statistics from hourly aggregates; not invoice totals or exact credit-balance changes. Recent requests may lag by a few minutes.";

export async function getUsageReport(
  env: Env,
  scope: AnalyticsScope,
  input: { from?: string; to?: string; granularity?: "day" | "hour" },
  now = Date.now(),
): Promise<UsageReport> {
  const granularity = input.granularity ?? "day";
  const range = resolveRange(input, granularity, now);
  return guarded(async () => {
    const db = getDb(env.DB);
    const where = sql`${scopeFilter(scope)} AND hour_start >= ${range.fromMs} AND hour_start < ${range.toMs}`;
    const bucketMs = granularity === "day" ? DAY_MS : HOUR_MS;
    const [totalRows, seriesRows] = await Promise.all([
      db.all<SumRow>(sql`SELECT ${SUMS} FROM usage_hourly WHERE ${where}`),
      db.all<SumRow & { bucket: number }>(sql`
        SELECT hour_start - (hour_start % ${bucketMs}) AS bucket, ${SUMS} FROM usage_hourly
        WHERE ${where} GROUP BY bucket HAVING SUM(requests) > 0 ORDER BY bucket
      `),
    ]);
    const [providers, models, apps, updatedAt] = await Promise.all([
      groupedSums(db, scope, range, "provider"),
      groupedSums(db, scope, range, "model"),
      groupedSums(db, scope, range, "app"),
      lastAggregation(db, range),
    ]);
    const totals = totalRows[0] ? toSums(totalRows[0]) : zeroSums();
    const [mostUsedProvider, mostUsedModel, mostUsedApp] = await Promise.all([
      mostUsed(db, scope, "provider", providers),
      mostUsed(db, scope, "model", models),
      mostUsed(db, scope, "app", apps),
    ]);
    return {
      scope: scopeView(scope),
      period: { from: range.from, to: range.to, granularity, timezone: "UTC" as const },
      updatedAt,
      totals: toTotals(totals),
      series: seriesRows.map((r) => ({ start: new Date(r.bucket).toISOString(), ...toTotals(toSums(r)) })),
      mostUsedProvider,
      mostUsedModel,
      mostUsedApp,
      appUsageCoverage: coverageOf(apps, totals.requests),
      note: NOTE,
    };
  });
}

// ---------- get-usage-breakdown ----------

export interface BreakdownRow extends UsageTotals {
  id: string;
  name: string;
  rank: number;
}

export interface UsageBreakdown {
  scope: ReturnType<typeof scopeView>;
  period: { from: string; to: string; timezone: "UTC" };
  groupBy: GroupBy;
  sortBy: SortBy;
  updatedAt: string | null;
  rows: BreakdownRow[];
  totals: UsageTotals;
  coverage: Coverage;
  pagination: { limit: number; offset: number; total: number; hasMore: boolean; nextOffset: number | null };
  note: string;
}

export async function getUsageBreakdown(
  env: Env,
  scope: AnalyticsScope,
  input: { from?: string; to?: string; groupBy: GroupBy; sortBy?: SortBy; limit?: number; offset?: number },
  now = Date.now(),
): Promise<UsageBreakdown> {
  const range = resolveRange(input, "day", now);
  const sortBy = input.sortBy ?? "requests";
  const limit = input.limit ?? 10;
  const offset = input.offset ?? 0;
  return guarded(async () => {
    const db = getDb(env.DB);
    const [groups, updatedAt, periodRows] = await Promise.all([
      groupedSums(db, scope, range, input.groupBy),
      lastAggregation(db, range),
      db.all<{ r: string }>(sql`
        SELECT CAST(COALESCE(SUM(requests), 0) AS TEXT) AS r FROM usage_hourly
        WHERE ${scopeFilter(scope)} AND hour_start >= ${range.fromMs} AND hour_start < ${range.toMs}
      `),
    ]);
    const ranked = rank(groups, sortBy).filter(([, s]) => s.requests > 0n);
    const page = ranked.slice(offset, offset + limit);
    const names = await displayNames(db, scope, input.groupBy, page.map(([id]) => id));
    let totals = zeroSums();
    for (const [, s] of ranked) totals = addSums(totals, s);
    const hasMore = offset + page.length < ranked.length;
    return {
      scope: scopeView(scope),
      period: { from: range.from, to: range.to, timezone: "UTC" as const },
      groupBy: input.groupBy,
      sortBy,
      updatedAt,
      rows: page.map(([id, s], i) => ({ id, name: names.get(id) ?? id, rank: offset + i + 1, ...toTotals(s) })),
      totals: toTotals(totals),
      coverage: coverageOf(groups, big(periodRows[0]?.r)),
      pagination: { limit, offset, total: ranked.length, hasMore, nextOffset: hasMore ? offset + limit : null },
      note: NOTE,
    };
  });
}

// ---------- account ----------

/** Organization credit balance as a decimal USD string (owners and admins only; the caller checks). */
export async function organizationCreditBalance(env: Env, organizationId: string): Promise<string> {
  const rows = await getDb(env.DB).all<{ c: string | null }>(
    sql`SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ${organizationId}`,
  );
  return formatUsd(big(rows[0]?.c ?? "0"));
}

/** Fresh user/member facts for get-account. */
export async function loadMemberView(env: Env, memberId: string, organizationId: string) {
  const rows = await getDb(env.DB)
    .select({
      userId: users.id,
      email: users.email,
      name: sql<string>`coalesce(${members.name}, '')`,
      role: members.role,
      orgName: organizations.name,
      acceptedAt: members.acceptedAt,
    })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(and(eq(members.id, memberId), eq(members.organizationId, organizationId)))
    .limit(1);
  return rows[0] ?? null;
}
