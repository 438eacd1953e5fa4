/**
 * The owner's spending limit as part of a key's `limitState` (src/keys/limit-state.ts): a key
 * whose owner reached a member or team limit is refused like one at its own limit, so it shows
 * `limitState.reached` and `limitState.member`. Lists read the member's settled spend from D1
 * (`key_spend` row `member:<id>`, written by the member's budget object), one key reads it live.
 */
import { eq, inArray, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { keySpend, members, teamMembers, teams } from "../db/schema";
import { addPeriod } from "../billing/period";
import type { Pico } from "../billing/money";
import { keyStateStub } from "../durable-objects/key-state";
import { limitStateOf, type KeyLimitState } from "../keys/limit-state";
import { effectiveMemberLimits, limitsOf, type MemberLimits } from "./limits";
import { memberBudgetName } from "./budget";

export type MemberLimitState = KeyLimitState & { memberId: string };

interface Spend {
  usage: Pico;
  periodUsage: Pico;
  periodStartedAt: number | null;
}

function stateOf(memberId: string, limits: MemberLimits, s: Spend, now: number): MemberLimitState {
  const value = limits.periodUsageDurationValue;
  const unit = limits.periodUsageDurationUnit;
  const end = s.periodStartedAt !== null && value && unit ? addPeriod(s.periodStartedAt, value, unit) : null;
  const running = end !== null && end > now;
  return { memberId, ...limitStateOf(limits, { usage: s.usage, periodUsage: running ? s.periodUsage : 0n }, running ? new Date(end).toISOString() : null) };
}

/** Limit states of the organization's members that have limits (D1 only: no object call). */
export async function memberLimitStates(env: Env, organizationId: string, now = Date.now()): Promise<Map<string, MemberLimitState>> {
  const db = getDb(env.DB);
  const [ms, links, spends] = await Promise.all([
    db.select().from(members).where(eq(members.organizationId, organizationId)),
    db
      .select({ memberId: teamMembers.memberId, usageLimit: teams.usageLimit, periodUsageLimit: teams.periodUsageLimit, periodUsageDurationValue: teams.periodUsageDurationValue, periodUsageDurationUnit: teams.periodUsageDurationUnit })
      .from(teamMembers)
      .innerJoin(teams, eq(teams.id, teamMembers.teamId))
      .where(eq(teams.organizationId, organizationId)),
    db
      .select()
      .from(keySpend)
      .where(inArray(keySpend.apiKeyId, db.select({ id: sql<string>`'member:' || ${members.id}` }).from(members).where(eq(members.organizationId, organizationId)))),
  ]);
  const spendOf = new Map(spends.map((r) => [r.apiKeyId, r]));
  const out = new Map<string, MemberLimitState>();
  for (const m of ms) {
    const limits = effectiveMemberLimits(limitsOf(m), links.filter((l) => l.memberId === m.id));
    if (!limits) continue;
    const r = spendOf.get(memberBudgetName(m.id));
    const s: Spend = r ? { usage: BigInt(r.usagePico), periodUsage: BigInt(r.periodUsagePico), periodStartedAt: r.periodStartedAt } : { usage: 0n, periodUsage: 0n, periodStartedAt: null };
    out.set(m.id, stateOf(m.id, limits, s, now));
  }
  return out;
}

/** One member's limit state, live from their budget object (null: no limit applies). */
export async function memberLimitStateLive(env: Env, memberId: string, now = Date.now()): Promise<MemberLimitState | null> {
  const db = getDb(env.DB);
  const [m, links] = await Promise.all([
    db.select().from(members).where(eq(members.id, memberId)).get(),
    db
      .select({ usageLimit: teams.usageLimit, periodUsageLimit: teams.periodUsageLimit, periodUsageDurationValue: teams.periodUsageDurationValue, periodUsageDurationUnit: teams.periodUsageDurationUnit })
      .from(teamMembers)
      .innerJoin(teams, eq(teams.id, teamMembers.teamId))
      .where(eq(teamMembers.memberId, memberId)),
  ]);
  const limits = m ? effectiveMemberLimits(limitsOf(m), links) : null;
  if (!limits) return null;
  return stateOf(memberId, limits, await keyStateStub(env, memberBudgetName(memberId)).getSpend(now), now);
}

/** A key's limit state with its owner's: reached when either is. */
export function withOwner<T extends { limitState: KeyLimitState | null }>(item: T, owner: MemberLimitState | null | undefined): T {
  if (!owner || !item.limitState) return item;
  return { ...item, limitState: { ...item.limitState, reached: item.limitState.reached || owner.reached, member: owner } };
}
