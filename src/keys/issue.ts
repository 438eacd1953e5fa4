/**
 * Creating a key on behalf of an organization (master `POST /v1/master/keys`, dashboard
 * `POST /api/keys`): checks that the project and the creating member belong to the organization,
 * that the limits form a valid window and that IP rules are allowed by the plan, then creates it.
 */
import { and, asc, eq, exists, isNull } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { members, projects, type KeyKind } from "../db/schema";
import { badRequest, notFound } from "../errors/api-error";
import { assertRulesAllowedForPlan, storedRuleValue } from "../iam/rules";
import type { RuleBody } from "../iam/rule-body";
import { createGatewayKey, type KeyActor, type KeyRow, type NewKeyInput, type WriteCondition } from "./create";
import { mergeLimits, type LimitPatch } from "./limits";

export interface IssueKeyInput extends LimitPatch {
  organizationId: string;
  projectId: string;
  /** Creating member; default the organization's (first) owner. */
  memberId?: string | undefined;
  description: string;
  kind?: Exclude<KeyKind, "playground"> | undefined;
  expiresAt?: number | null | undefined;
  alertThresholdPercent?: number | null | undefined;
  /** The key's own rate limits (null / absent: only the organization's). */
  requestsPerMinute?: number | null | undefined;
  tokensPerMinute?: number | null | undefined;
  iamRules?: RuleBody[] | undefined;
  /** Default `manager` (master API, owners and admins). */
  actor?: KeyActor | undefined;
  session?: NewKeyInput["session"];
  /** More conditions the key is written under (besides its project being live); see NewKeyInput. */
  writeOnlyIf?: WriteCondition[] | undefined;
}

export async function issueKey(env: Env, input: IssueKeyInput, now = Date.now()): Promise<{ row: KeyRow; token: string }> {
  const db = getDb(env.DB);
  const limits = mergeLimits({ usageLimit: null, periodUsageLimit: null, periodUsageDurationValue: null, periodUsageDurationUnit: null }, input);
  if (input.expiresAt != null && input.expiresAt <= now) throw badRequest("expiresAt must be in the future.", "expiresAt");

  const project = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, input.projectId), eq(projects.organizationId, input.organizationId), isNull(projects.deletedAt)))
    .get();
  const projectGone = notFound(`Project '${input.projectId}' not found`, "project_not_found");
  if (!project) throw projectGone;
  // Checked again in the insert: a project deleted from here on must not keep a key it never swept.
  const projectLive = exists(db.select({ id: projects.id }).from(projects).where(and(eq(projects.id, project.id), isNull(projects.deletedAt))));

  const member = input.memberId
    ? await db.select({ id: members.id }).from(members).where(and(eq(members.id, input.memberId), eq(members.organizationId, input.organizationId))).get()
    : await db
        .select({ id: members.id })
        .from(members)
        .where(and(eq(members.organizationId, input.organizationId), eq(members.role, "owner")))
        .orderBy(asc(members.createdAt), asc(members.id))
        .get();
  if (!member) throw notFound(input.memberId ? `Member '${input.memberId}' not found` : "The organization has no owner", "member_not_found");

  const rules = input.iamRules ?? [];
  await assertRulesAllowedForPlan(db, input.organizationId, rules.map((r) => r.ruleType));
  const stored = await Promise.all(rules.map((r, i) => storedRuleValue(db, input.organizationId, r.ruleType, r.ruleValue, `iamRules[${i}].ruleValue`)));

  return createGatewayKey(env, {
    organizationId: input.organizationId,
    projectId: project.id,
    createdBy: member.id,
    description: input.description,
    kind: input.kind ?? "standard",
    expiresAt: input.expiresAt ?? null,
    alertThresholdPercent: input.alertThresholdPercent ?? null,
    requestsPerMinute: input.requestsPerMinute ?? null,
    tokensPerMinute: input.tokensPerMinute ?? null,
    ...limits,
    actor: input.actor ?? "manager",
    session: input.session,
    writeOnlyIf: [{ holds: projectLive, refusal: projectGone }, ...(input.writeOnlyIf ?? [])],
    iamRules: rules.map((r, i) => ({ ruleType: r.ruleType, ruleValue: stored[i]!, status: r.status ?? "active" })),
  });
}
