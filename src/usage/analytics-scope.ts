/**
 * Who a usage report is about (the key's project, or only the keys its member created) and the
 * date range it covers, validated against the spec's limits. Shared by the analytics reports.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { getDb } from "../db/client";
import { apiKeys, members, projects, type Role } from "../db/schema";

export const DAY_MS = 86_400_000;
export const MAX_RANGE_DAYS = 366;
export const MAX_HOURLY_RANGE_DAYS = 31;
export const DEFAULT_RANGE_DAYS = 30;

export type AnalyticsErrorKind = "invalid_range" | "forbidden" | "unavailable";

/** Failures the MCP tools report as tool errors (`isError: true`). */
export class AnalyticsError extends Error {
  constructor(
    readonly kind: AnalyticsErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "AnalyticsError";
  }
}

// ---------- scope ----------

export interface AnalyticsScope {
  /** `project`: every key of the project (owners, admins); `own_keys`: keys the member created. */
  type: "project" | "own_keys";
  organizationId: string;
  projectId: string;
  projectName: string;
  memberId: string;
  role: Role;
  description: string;
}

const describeScope = (type: AnalyticsScope["type"], projectName: string): string =>
  type === "project"
    ? `All API keys of project '${projectName}'`
    : `API keys you created in project '${projectName}' (including inactive keys)`;

/**
 * Scope of the connected key (spec 5.5), re-checked against D1 on every call: the key must still
 * be an active user key of a live project, and the role is read fresh (a demoted admin loses the
 * project-wide view at once). The caller has already checked liveness with `checkKey`.
 * Every gateway key kind is a user key (standard, coding-plan, and the project's playground key,
 * which belongs to the owner and reads the same project analytics); customer credentials
 * (platform `sk_` keys, end-user sessions) never authenticate on MCP at all.
 */
export async function resolveAnalyticsScope(env: Env, auth: KeyContext): Promise<AnalyticsScope> {
  const db = getDb(env.DB);
  let row: { status: string; deletedAt: number | null; projectName: string; projectDeletedAt: number | null; role: Role | null } | undefined;
  try {
    const rows = await db
      .select({
        status: apiKeys.status,
        deletedAt: apiKeys.deletedAt,
        projectName: projects.name,
        projectDeletedAt: projects.deletedAt,
        role: members.role,
      })
      .from(apiKeys)
      .innerJoin(projects, eq(projects.id, apiKeys.projectId))
      .leftJoin(members, and(eq(members.id, apiKeys.createdBy), eq(members.organizationId, apiKeys.organizationId)))
      .where(and(eq(apiKeys.id, auth.key.id), eq(apiKeys.organizationId, auth.organization.id)))
      .limit(1);
    row = rows[0];
  } catch {
    throw new AnalyticsError("unavailable", "The analytics store is unavailable right now; try again shortly.");
  }
  if (!row || row.status !== "active" || row.deletedAt !== null) {
    throw new AnalyticsError("forbidden", "Analytics need an active API key.");
  }
  if (row.projectDeletedAt !== null) throw new AnalyticsError("forbidden", "The key's project no longer exists.");
  if (!row.role) throw new AnalyticsError("forbidden", "The key's creator is no longer a member of the organization.");
  const type = row.role === "owner" || row.role === "admin" ? "project" : "own_keys";
  return {
    type,
    organizationId: auth.organization.id,
    projectId: auth.key.projectId,
    projectName: row.projectName,
    memberId: auth.key.createdBy,
    role: row.role,
    description: describeScope(type, row.projectName),
  };
}

export function scopeFilter(scope: AnalyticsScope): SQL {
  const base = sql`organization_id = ${scope.organizationId} AND project_id = ${scope.projectId}`;
  if (scope.type === "project") return base;
  return sql`${base} AND api_key_id IN (SELECT id FROM api_keys WHERE project_id = ${scope.projectId} AND created_by = ${scope.memberId})`;
}

// ---------- ranges ----------

export interface DateRange {
  from: string;
  to: string;
  /** Inclusive start, epoch ms (00:00 UTC of `from`). */
  fromMs: number;
  /** Exclusive end, epoch ms (00:00 UTC of the day after `to`). */
  toMs: number;
  days: number;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDate(value: string, name: string): number {
  const m = DATE_RE.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new AnalyticsError("invalid_range", `'${name}' must be a UTC date written YYYY-MM-DD (got '${value}').`);
  }
  return ms;
}

const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Defaults: `to` = today (UTC), `from` = `to` - 29 days. Limits of spec 8. */
export function resolveRange(input: { from?: string; to?: string }, granularity: "day" | "hour", now = Date.now()): DateRange {
  const toDay = input.to !== undefined ? parseDate(input.to, "to") : parseDate(isoDate(now), "to");
  const fromDay = input.from !== undefined ? parseDate(input.from, "from") : toDay - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (fromDay > toDay) throw new AnalyticsError("invalid_range", `'from' (${isoDate(fromDay)}) must not be after 'to' (${isoDate(toDay)}).`);
  const days = (toDay - fromDay) / DAY_MS + 1;
  if (days > MAX_RANGE_DAYS) {
    throw new AnalyticsError("invalid_range", `The date range covers ${days} days; at most ${MAX_RANGE_DAYS} days are allowed.`);
  }
  if (granularity === "hour" && days > MAX_HOURLY_RANGE_DAYS) {
    throw new AnalyticsError(
      "invalid_range",
      `Hourly reports cover at most ${MAX_HOURLY_RANGE_DAYS} days; this range covers ${days} days. Use granularity 'day' or a shorter range.`,
    );
  }
  return { from: isoDate(fromDay), to: isoDate(toDay), fromMs: fromDay, toMs: toDay + DAY_MS, days };
}
