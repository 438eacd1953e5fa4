/**
 * Member spending limits (docs/keys-and-iam.md#member-and-team-spending-limits): all-time and
 * recurring limits per member and per team (a team's apply to each of its members, each on their
 * own spend), over every key the member owns. What applies to a member:
 *  - all-time: the smallest of the member's and their teams' all-time limits;
 *  - recurring: the member's own, else the team window with the smallest amount (one window per
 *    member: windows of different lengths are not combined).
 */
import { parseUsd } from "../billing/money";
import type { LimitState } from "../keys/limits";

export type LimitSource = "member" | "team";

/** The limits a member's budget object enforces, and who set each. */
export interface MemberLimits extends LimitState {
  usageLimitFrom: LimitSource | null;
  periodUsageLimitFrom: LimitSource | null;
}

export const NO_LIMITS: LimitState = { usageLimit: null, periodUsageLimit: null, periodUsageDurationValue: null, periodUsageDurationUnit: null };

export const limitsOf = (r: LimitState): LimitState => ({
  usageLimit: r.usageLimit,
  periodUsageLimit: r.periodUsageLimit,
  periodUsageDurationValue: r.periodUsageDurationValue,
  periodUsageDurationUnit: r.periodUsageDurationUnit,
});

const hasWindow = (l: LimitState): boolean => l.periodUsageLimit !== null && l.periodUsageDurationValue !== null && l.periodUsageDurationUnit !== null;

/** The member's limits in force, or null when neither the member nor a team of theirs has one. */
export function effectiveMemberLimits(own: LimitState, teams: readonly LimitState[]): MemberLimits | null {
  let usage: { limit: string; from: LimitSource } | null = own.usageLimit === null ? null : { limit: own.usageLimit, from: "member" };
  for (const t of teams) {
    if (t.usageLimit !== null && (usage === null || parseUsd(t.usageLimit) < parseUsd(usage.limit))) usage = { limit: t.usageLimit, from: "team" };
  }
  let period: { l: LimitState; from: LimitSource } | null = hasWindow(own) ? { l: own, from: "member" } : null;
  if (!period) {
    for (const t of teams) {
      if (hasWindow(t) && (period === null || parseUsd(t.periodUsageLimit!) < parseUsd(period.l.periodUsageLimit!))) period = { l: t, from: "team" };
    }
  }
  if (!usage && !period) return null;
  return {
    usageLimit: usage?.limit ?? null,
    usageLimitFrom: usage?.from ?? null,
    periodUsageLimit: period?.l.periodUsageLimit ?? null,
    periodUsageDurationValue: period?.l.periodUsageDurationValue ?? null,
    periodUsageDurationUnit: period?.l.periodUsageDurationUnit ?? null,
    periodUsageLimitFrom: period?.from ?? null,
  };
}
