/**
 * Spending limits of members and teams (src/members/), shared by the master API
 * (`/v1/master/members/{member}/limits`, `/v1/master/teams/{id}/limits`) and the session API
 * (`/api/members/{id}/limits`, `/api/teams/{id}/limits`). A change is pushed to the budget object
 * of every member it concerns and their keys are bumped before the answer, so it is immediate.
 */
import { and, eq } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { members, teamMembers, teams } from "../db/schema";
import { forbidden } from "../errors/api-error";
import { formatUsd } from "../billing/money";
import { addPeriod } from "../billing/period";
import { limitFields, mergeLimits, type LimitPatch } from "../keys/limits";
import { limitStateOf } from "../keys/limit-state";
import { bumpKeyVersions } from "../keys/sync";
import { keyStateStub } from "../durable-objects/key-state";
import { effectiveMemberLimits, limitsOf } from "../members/limits";
import { memberBudgetName, syncMemberBudget } from "../members/budget";
import { resolveMember, type MemberActor } from "./members";
import { loadTeam } from "./teams";

export const spendLimitsBody = z.object(limitFields).refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update: send a limit field (null clears)" });

/** A member's limits, the limits in force (with their teams'), and the member's spend against them (live, from their budget object). */
export async function memberLimitsView(env: Env, organizationId: string, ref: string) {
  const m = await resolveMember(env, organizationId, ref);
  const db = getDb(env.DB);
  const [row, teamRows] = await Promise.all([
    db.select().from(members).where(eq(members.id, m.id)).get(),
    db
      .select({ usageLimit: teams.usageLimit, periodUsageLimit: teams.periodUsageLimit, periodUsageDurationValue: teams.periodUsageDurationValue, periodUsageDurationUnit: teams.periodUsageDurationUnit })
      .from(teamMembers)
      .innerJoin(teams, eq(teams.id, teamMembers.teamId))
      .where(eq(teamMembers.memberId, m.id)),
  ]);
  const own = limitsOf(row!);
  const effective = effectiveMemberLimits(own, teamRows);
  const spend = effective ? await keyStateStub(env, memberBudgetName(m.id)).getSpend() : null;
  const endsAt =
    spend && spend.periodStartedAt !== null && effective?.periodUsageDurationValue && effective.periodUsageDurationUnit
      ? new Date(addPeriod(spend.periodStartedAt, effective.periodUsageDurationValue, effective.periodUsageDurationUnit)).toISOString()
      : null;
  return {
    object: "member_limits" as const,
    memberId: m.id,
    /** Set on the member. */
    limits: own,
    /** In force: the member's and their teams' (null: none), with who set each. */
    effective,
    /** The member's spend over every key they own (null without a limit: not tracked then). */
    usage: spend ? formatUsd(spend.usage) : null,
    periodUsage: spend ? formatUsd(spend.periodUsage) : null,
    periodEndsAt: endsAt,
    limitState: spend && effective ? limitStateOf(effective, spend, endsAt) : null,
  };
}

/** Admins cannot change an owner's limits (as with member rules, spec 5 rule 6). */
async function assertMayChange(env: Env, organizationId: string, memberId: string, actor?: MemberActor): Promise<void> {
  if (!actor || actor.role === "owner") return;
  const target = await getDb(env.DB).select({ role: members.role }).from(members).where(and(eq(members.id, memberId), eq(members.organizationId, organizationId))).get();
  if (actor.role !== "admin" || target?.role === "owner") throw forbidden("Only an owner can change an owner's spending limits.", "owner_required");
}

export async function setMemberLimits(env: Env, organizationId: string, ref: string, patch: LimitPatch, actor?: MemberActor) {
  const m = await resolveMember(env, organizationId, ref);
  await assertMayChange(env, organizationId, m.id, actor);
  const db = getDb(env.DB);
  const row = await db.select().from(members).where(eq(members.id, m.id)).get();
  const next = mergeLimits(limitsOf(row!), patch);
  await db.update(members).set(next).where(eq(members.id, m.id));
  await syncMemberBudget(env, organizationId, m.id);
  await bumpKeyVersions(env, { createdBy: m.id });
  return memberLimitsView(env, organizationId, m.id);
}

export async function teamLimitsView(env: Env, organizationId: string, teamId: string) {
  const t = await loadTeam(env, organizationId, teamId);
  return { object: "team_limits" as const, teamId: t.id, limits: limitsOf(t) };
}

/** A team's limits apply to each of its members (each on their own spend). */
export async function setTeamLimits(env: Env, organizationId: string, teamId: string, patch: LimitPatch, actor?: MemberActor) {
  if (actor && actor.role !== "owner" && actor.role !== "admin") throw forbidden("Only owners and admins change team spending limits.", "admin_required");
  const t = await loadTeam(env, organizationId, teamId);
  const next = mergeLimits(limitsOf(t), patch);
  const db = getDb(env.DB);
  await db.update(teams).set(next).where(eq(teams.id, t.id));
  const inTeam = await db.select({ id: teamMembers.memberId }).from(teamMembers).where(eq(teamMembers.teamId, t.id));
  await Promise.all(inTeam.map((m) => syncMemberBudget(env, organizationId, m.id)));
  await bumpKeyVersions(env, { teamId: t.id });
  return { object: "team_limits" as const, teamId: t.id, limits: next };
}
