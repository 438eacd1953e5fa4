/**
 * IAM rule administration at the three levels (key, member, team). Every change bumps the versions
 * of the keys it affects and pushes them to their KeyState DOs before returning, so the next
 * request on any isolate reloads the rules (src/keys/sync.ts).
 */
import { and, eq, ne } from "drizzle-orm";
import type { Env } from "../env";
import { getDb, type Db } from "../db/client";
import { apiKeys, customProviders, iamRules, members, organizations, teams, users, type RuleLevel, type RuleType, type RuleValue } from "../db/schema";
import { badRequest, forbidden, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { bumpKeyVersions } from "../keys/sync";
import { isIpRule, normalizeRuleValue, validateMergedRule, type RuleBody, type RulePatch } from "./rule-body";
import { canonicalModelRefs } from "./model-refs";

export type RuleRow = typeof iamRules.$inferSelect;

export interface RuleTarget {
  organizationId: string;
  level: RuleLevel;
  /** Key id, member id or team id. */
  targetId: string;
}

/** The rule value as the caller sent it (without the internal canonical model list). */
export function publicRuleValue(v: RuleValue): RuleValue {
  const { canonicalModels: _internal, ...shown } = v;
  return shown;
}

/**
 * Normalizes a validated rule value and, for model rules, resolves every entry to the canonical
 * form evaluation matches (400 naming `<param>.models[i]` for an unknown model).
 */
export async function storedRuleValue(db: Db, organizationId: string, ruleType: RuleType, value: RuleValue, param = "ruleValue"): Promise<RuleValue> {
  const normalized = normalizeRuleValue(ruleType, value);
  if (!normalized.models) return normalized;
  const custom = await db.select({ name: customProviders.name }).from(customProviders).where(eq(customProviders.organizationId, organizationId));
  const r = canonicalModelRefs(normalized.models, custom.map((p) => p.name));
  if (!r.ok) throw badRequest(`Invalid value for '${param}.models[${r.index}]': ${r.message}.`, `${param}.models[${r.index}]`, "model_not_found");
  return { ...normalized, canonicalModels: r.models };
}

export function publicRule(r: RuleRow) {
  return {
    id: r.id,
    object: "iam_rule" as const,
    level: r.level,
    targetId: r.targetId,
    ruleType: r.ruleType,
    ruleValue: publicRuleValue(r.ruleValue),
    status: r.status,
    createdAt: new Date(r.createdAt).toISOString(),
  };
}

// ---------- targets ----------

export async function resolveKeyTarget(db: Db, organizationId: string, keyId: string): Promise<RuleTarget> {
  const row = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.organizationId, organizationId), ne(apiKeys.status, "deleted")))
    .get();
  if (!row) throw notFound(`API key '${keyId}' not found`, "key_not_found");
  return { organizationId, level: "key", targetId: row.id };
}

/** `{member}` is a member id or an e-mail address (contract section 4). */
export async function resolveMemberTarget(db: Db, organizationId: string, member: string): Promise<RuleTarget & { role: string }> {
  const byEmail = member.includes("@");
  const row = await db
    .select({ id: members.id, role: members.role })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), byEmail ? eq(users.email, member.trim().toLowerCase()) : eq(members.id, member)))
    .get();
  if (!row) throw notFound(`Member '${member}' not found`, "member_not_found");
  return { organizationId, level: "member", targetId: row.id, role: row.role };
}

export async function resolveTeamTarget(db: Db, organizationId: string, teamId: string): Promise<RuleTarget> {
  const row = await db.select({ id: teams.id }).from(teams).where(and(eq(teams.id, teamId), eq(teams.organizationId, organizationId))).get();
  if (!row) throw notFound(`Team '${teamId}' not found`, "team_not_found");
  return { organizationId, level: "team", targetId: row.id };
}

// ---------- plan gate ----------

/** IP rules exist on the Enterprise plan only (spec 2.2, contract section 4). */
export async function assertRulesAllowedForPlan(db: Db, organizationId: string, ruleTypes: readonly RuleType[]): Promise<void> {
  if (!ruleTypes.some(isIpRule)) return;
  const org = await db.select({ plan: organizations.plan }).from(organizations).where(eq(organizations.id, organizationId)).get();
  if (org?.plan !== "enterprise") {
    throw forbidden("IP range rules (allow_ip_cidrs, deny_ip_cidrs) are available on the Enterprise plan only.", "plan_required");
  }
}

// ---------- affected keys ----------

/** Bumps (and syncs) every key whose authorization depends on rules of this target. */
export async function bumpAffectedKeys(env: Env, target: RuleTarget): Promise<void> {
  switch (target.level) {
    case "key":
      return bumpKeyVersions(env, { keyId: target.targetId });
    case "member":
      return bumpKeyVersions(env, { createdBy: target.targetId });
    case "team":
      return bumpKeyVersions(env, { teamId: target.targetId });
  }
}

// ---------- CRUD ----------

export async function createRule(env: Env, target: RuleTarget, body: RuleBody): Promise<RuleRow> {
  const db = getDb(env.DB);
  await assertRulesAllowedForPlan(db, target.organizationId, [body.ruleType]);
  const [row] = await db
    .insert(iamRules)
    .values({
      id: newId("iam"),
      organizationId: target.organizationId,
      level: target.level,
      targetId: target.targetId,
      ruleType: body.ruleType,
      ruleValue: await storedRuleValue(db, target.organizationId, body.ruleType, body.ruleValue),
      status: body.status ?? "active",
      createdAt: Date.now(),
    })
    .returning();
  if (!row) throw new Error("rule insert returned no row");
  await bumpAffectedKeys(env, target);
  return row;
}

export async function listRules(env: Env, target: RuleTarget): Promise<RuleRow[]> {
  return getDb(env.DB)
    .select()
    .from(iamRules)
    .where(and(eq(iamRules.organizationId, target.organizationId), eq(iamRules.level, target.level), eq(iamRules.targetId, target.targetId)))
    .orderBy(iamRules.createdAt, iamRules.id);
}

async function getRule(db: Db, target: RuleTarget, ruleId: string): Promise<RuleRow> {
  const row = await db
    .select()
    .from(iamRules)
    .where(
      and(
        eq(iamRules.id, ruleId),
        eq(iamRules.organizationId, target.organizationId),
        eq(iamRules.level, target.level),
        eq(iamRules.targetId, target.targetId),
      ),
    )
    .get();
  if (!row) throw notFound(`IAM rule '${ruleId}' not found`, "rule_not_found");
  return row;
}

export async function updateRule(env: Env, target: RuleTarget, ruleId: string, patch: RulePatch): Promise<RuleRow> {
  const db = getDb(env.DB);
  const current = await getRule(db, target, ruleId);
  const ruleType = patch.ruleType ?? current.ruleType;
  let ruleValue: RuleValue = patch.ruleValue ?? current.ruleValue;
  if (patch.ruleType !== undefined || patch.ruleValue !== undefined) {
    ruleValue = publicRuleValue(ruleValue);
    const check = validateMergedRule(ruleType, ruleValue);
    if (!check.ok) throw badRequest(check.message, check.param);
    ruleValue = await storedRuleValue(db, target.organizationId, ruleType, ruleValue);
    await assertRulesAllowedForPlan(db, target.organizationId, [ruleType]);
  }
  const [row] = await db
    .update(iamRules)
    .set({ ruleType, ruleValue, status: patch.status ?? current.status })
    .where(eq(iamRules.id, current.id))
    .returning();
  if (!row) throw notFound(`IAM rule '${ruleId}' not found`, "rule_not_found");
  await bumpAffectedKeys(env, target);
  return row;
}

export async function deleteRule(env: Env, target: RuleTarget, ruleId: string): Promise<void> {
  const db = getDb(env.DB);
  const current = await getRule(db, target, ruleId);
  await db.delete(iamRules).where(eq(iamRules.id, current.id));
  await bumpAffectedKeys(env, target);
}
