/**
 * Everything the request path needs to know about a gateway key, loaded from D1 in one round
 * trip (one batch) and then served from the isolate cache (src/auth/key-cache.ts). Liveness (status, secret,
 * expiry, spend) is re-checked on every request by the key's KeyState Durable Object, which also
 * reports the key's `version`; a newer version makes the isolate reload this context.
 */
import { and, eq, inArray, or } from "drizzle-orm";
import { primaryReads, replicaReads, type Db } from "../db/client";
import {
  apiKeys,
  customModels,
  customProviders,
  iamRules,
  members,
  organizations,
  projects,
  providerKeys,
  retiredKeyFingerprints,
  teamMembers,
  teams,
  users,
  type CompliancePolicy,
  type CustomModelCapabilities,
  type CustomModelPricing,
  type KeyKind,
  type KeyStatus,
  type NotificationSettings,
  type PeriodUnit,
  type Plan,
  type ProjectMode,
  type Role,
  type RuleType,
  type RuleValue,
} from "../db/schema";
import { effectiveMemberLimits, type MemberLimits } from "../members/limits";
import { noteConfirmed } from "./policy-freshness";
import type { ProviderPreferences } from "../routing/preferences";

export interface KeyRecord {
  id: string;
  organizationId: string;
  projectId: string;
  createdBy: string;
  description: string;
  kind: KeyKind;
  status: KeyStatus;
  fingerprint: string;
  expiresAt: number | null;
  usageLimit: string | null;
  periodUsageLimit: string | null;
  periodUsageDurationValue: number | null;
  periodUsageDurationUnit: PeriodUnit | null;
  version: number;
  /** The key's own rate limits (null: none); src/rate-limits/. */
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
  /** End-user sessions (`kind: "session"`): the app's end user; null for other keys. */
  endUserId?: string | null;
}

export interface IamRuleRecord {
  id: string;
  level: "key" | "member" | "team";
  targetId: string;
  ruleType: RuleType;
  ruleValue: RuleValue;
}

export interface CustomProviderRecord {
  id: string;
  name: string;
  baseUrl: string;
  tokenCiphertext: string;
}

export interface CustomModelRecord {
  id: string;
  providerName: string;
  modelId: string;
  name: string | null;
  pricing: CustomModelPricing;
  contextLength: number | null;
  capabilities: CustomModelCapabilities;
}

export interface ProviderKeyRecord {
  id: string;
  provider: string;
  label: string | null;
  baseUrl: string | null;
  tokenCiphertext: string;
  /** Share of the provider's requests (positive; 1 when not set). */
  weight?: number;
  /** The region whose endpoint this key serves; null or absent: every endpoint. */
  region?: string | null;
}

export interface KeyContext {
  key: KeyRecord;
  organization: {
    id: string;
    name: string;
    plan: Plan;
    compliance: CompliancePolicy;
    notifications: NotificationSettings;
    /** The organization's own rate limits (null: its plan's); src/rate-limits/. */
    requestsPerMinute?: number | null;
    tokensPerMinute?: number | null;
    /** The most it may set for itself, granted by the operator (null: its plan's). */
    maxRequestsPerMinute?: number | null;
    maxTokensPerMinute?: number | null;
  };
  project: {
    id: string;
    name: string;
    mode: ProjectMode;
    cachingEnabled: boolean;
    cacheDurationSeconds: number;
    /** Upstream timeouts and hedging (src/routing/timeouts.ts); absent: the gateway's defaults. */
    firstByteTimeoutMs?: number | null;
    timeoutMs?: number | null;
    hedging?: boolean;
    /** Request and response bodies kept with the record (src/usage/bodies.ts). */
    logBodies: boolean;
    /** Default `provider` preferences for requests that send none; absent or null: none. */
    providerPreferences?: ProviderPreferences | null;
    /** Hybrid: after the organization's keys of a provider failed, its operator key (credits; src/routing/operator-fallback.ts). */
    operatorKeyFallback?: boolean;
  };
  /** The member who created the key (member and team rules apply through them). */
  member: {
    id: string;
    role: Role;
    userId: string;
    email: string;
    name: string;
    teamIds: string[];
    /** Spending limits over every key the member owns (theirs and their teams'; src/members/); null: none. */
    limits?: MemberLimits | null;
  };
  /** Active IAM rules by level. */
  rules: { team: IamRuleRecord[]; member: IamRuleRecord[]; key: IamRuleRecord[] };
  customProviders: CustomProviderRecord[];
  customModels: CustomModelRecord[];
  providerKeys: ProviderKeyRecord[];
  /** When this context was read from D1 (epoch ms). */
  loadedAt: number;
}

export type KeyLookup =
  | { found: true; context: KeyContext }
  | { found: false; rolled: boolean };

/**
 * Loads the context of the key with this fingerprint, or says whether it is a rolled secret: one
 * D1 batch (one round trip, one consistent snapshot: a batch runs as one transaction), every
 * statement keyed by the fingerprint itself, so none waits for another's answer. A miss costs
 * the same round trip (the retired-fingerprint row rides in the batch).
 */
export async function loadKeyContext(db: Db, fp: string): Promise<KeyLookup> {
  // Each statement reads one table (or a join without repeated column names): D1 batches return
  // rows as objects, so columns with the same name (id, name, created_at) in a join would
  // overwrite each other. The key's own ids are subqueries on the fingerprint's unique index.
  const byFp = eq(apiKeys.fingerprint, fp);
  const keyIdQ = db.select({ v: apiKeys.id }).from(apiKeys).where(byFp);
  const orgIdQ = db.select({ v: apiKeys.organizationId }).from(apiKeys).where(byFp);
  const memberIdQ = db.select({ v: apiKeys.createdBy }).from(apiKeys).where(byFp);
  const teamIdsQ = db.select({ v: teamMembers.teamId }).from(teamMembers).where(inArray(teamMembers.memberId, memberIdQ));
  const [keys, orgs, projs, mems, usrs, teamRows, ruleRows, cps, cms, pks, retired] = await db.batch([
    db.select().from(apiKeys).where(byFp).limit(1),
    db.select().from(organizations).where(inArray(organizations.id, orgIdQ)),
    db.select().from(projects).where(inArray(projects.id, db.select({ v: apiKeys.projectId }).from(apiKeys).where(byFp))),
    db.select().from(members).where(inArray(members.id, memberIdQ)),
    db
      .select({ email: users.email, name: users.name })
      .from(users)
      .where(inArray(users.id, db.select({ v: members.userId }).from(members).where(inArray(members.id, memberIdQ)))),
    db
      .select({
        teamId: teamMembers.teamId,
        usageLimit: teams.usageLimit,
        periodUsageLimit: teams.periodUsageLimit,
        periodUsageDurationValue: teams.periodUsageDurationValue,
        periodUsageDurationUnit: teams.periodUsageDurationUnit,
      })
      .from(teamMembers)
      .innerJoin(teams, eq(teams.id, teamMembers.teamId))
      .where(inArray(teamMembers.memberId, memberIdQ)),
    db
      .select()
      .from(iamRules)
      .where(
        and(
          inArray(iamRules.organizationId, orgIdQ),
          eq(iamRules.status, "active"),
          or(
            and(eq(iamRules.level, "key"), inArray(iamRules.targetId, keyIdQ)),
            and(eq(iamRules.level, "member"), inArray(iamRules.targetId, memberIdQ)),
            and(eq(iamRules.level, "team"), inArray(iamRules.targetId, teamIdsQ)),
          ),
        ),
      ),
    db.select().from(customProviders).where(inArray(customProviders.organizationId, orgIdQ)),
    db.select().from(customModels).where(inArray(customModels.organizationId, orgIdQ)),
    db.select().from(providerKeys).where(inArray(providerKeys.organizationId, orgIdQ)),
    db.select({ id: retiredKeyFingerprints.apiKeyId }).from(retiredKeyFingerprints).where(eq(retiredKeyFingerprints.fingerprint, fp)).limit(1),
  ]);
  const [key, organization, project, member, user] = [keys[0], orgs[0], projs[0], mems[0], usrs[0]];
  // As an inner join of the five: a key whose organization, project or member is gone is no key.
  if (!key || !organization || !project || !member || !user) return { found: false, rolled: retired.length > 0 };
  return { found: true, context: contextOf({ key, organization, project, member, user }, { teamRows, ruleRows, cps, cms, pks }) };
}

/**
 * The request path's read of a key (docs/architecture.md, "D1 read replicas on the request path"):
 * through a nearby read replica, then, only when the replica's answer is not one `accept`s (no
 * row: a key created a moment ago elsewhere; a dead or older row the replica has not caught up
 * on), once more on the primary, whose answer stands. A replica answer can therefore only ever
 * admit, never refuse; and it admits no more than the key's KeyState object allows, since that
 * object decides liveness (secret, status, expiry, version) on every request.
 */
export async function readKeyContext(d1: D1Database, fp: string, accept: (ctx: KeyContext) => boolean): Promise<KeyLookup> {
  // A replica that cannot answer (its region unreachable) costs latency, not the request.
  const near = await loadKeyContext(replicaReads(d1), fp).catch(() => null);
  if (near?.found && accept(near.context)) return near;
  return readKeyContextOnPrimary(d1, fp);
}

/**
 * The key's context as the primary has it (a refusal that replica or cached data would decide).
 * The primary holds every change that returned before the read was sent, so its answer confirms
 * the key's rules as of then (src/context/policy-freshness.ts); a replica's answer confirms nothing.
 */
export async function readKeyContextOnPrimary(d1: D1Database, fp: string): Promise<KeyLookup> {
  const sentAt = Date.now();
  const found = await loadKeyContext(primaryReads(d1), fp);
  if (found.found) noteConfirmed(found.context.key.id, found.context.key.version, sentAt);
  return found;
}

type HeadRow = {
  key: typeof apiKeys.$inferSelect;
  organization: typeof organizations.$inferSelect;
  project: typeof projects.$inferSelect;
  member: typeof members.$inferSelect;
  user: { email: string; name: string };
};

interface DetailRows {
  teamRows: Array<Pick<typeof teams.$inferSelect, "usageLimit" | "periodUsageLimit" | "periodUsageDurationValue" | "periodUsageDurationUnit"> & { teamId: string }>;
  ruleRows: Array<typeof iamRules.$inferSelect>;
  cps: Array<typeof customProviders.$inferSelect>;
  cms: Array<typeof customModels.$inferSelect>;
  pks: Array<typeof providerKeys.$inferSelect>;
}

function contextOf(h: HeadRow, { teamRows, ruleRows, cps, cms, pks }: DetailRows): KeyContext {
  const rules: KeyContext["rules"] = { team: [], member: [], key: [] };
  for (const r of ruleRows) {
    rules[r.level].push({ id: r.id, level: r.level, targetId: r.targetId, ruleType: r.ruleType, ruleValue: r.ruleValue });
  }

  const k = h.key;
  return {
    key: {
      id: k.id,
      organizationId: k.organizationId,
      projectId: k.projectId,
      createdBy: k.createdBy,
      description: k.description,
      kind: k.kind,
      status: k.status,
      fingerprint: k.fingerprint,
      expiresAt: k.expiresAt,
      usageLimit: k.usageLimit,
      periodUsageLimit: k.periodUsageLimit,
      periodUsageDurationValue: k.periodUsageDurationValue,
      periodUsageDurationUnit: k.periodUsageDurationUnit,
      version: k.version,
      requestsPerMinute: k.requestsPerMinute,
      tokensPerMinute: k.tokensPerMinute,
      endUserId: k.endUserId,
    },
    organization: {
      id: h.organization.id,
      name: h.organization.name,
      plan: h.organization.plan,
      compliance: h.organization.compliance,
      notifications: h.organization.notifications,
      requestsPerMinute: h.organization.requestsPerMinute,
      tokensPerMinute: h.organization.tokensPerMinute,
      maxRequestsPerMinute: h.organization.maxRequestsPerMinute,
      maxTokensPerMinute: h.organization.maxTokensPerMinute,
    },
    project: {
      id: h.project.id,
      name: h.project.name,
      mode: h.project.mode,
      cachingEnabled: h.project.cachingEnabled,
      cacheDurationSeconds: h.project.cacheDurationSeconds,
      firstByteTimeoutMs: h.project.firstByteTimeoutMs,
      timeoutMs: h.project.timeoutMs,
      hedging: h.project.hedging,
      logBodies: h.project.logBodies,
      providerPreferences: h.project.providerPreferences ?? null,
      operatorKeyFallback: h.project.operatorKeyFallback,
    },
    member: {
      id: h.member.id,
      role: h.member.role,
      userId: h.member.userId,
      email: h.user.email,
      // The name the organization gave the member, not the account's own (contract section 5).
      name: h.member.name ?? "",
      teamIds: teamRows.map((t) => t.teamId),
      limits: effectiveMemberLimits(h.member, teamRows),
    },
    rules,
    customProviders: cps.map((p) => ({ id: p.id, name: p.name, baseUrl: p.baseUrl, tokenCiphertext: p.tokenCiphertext })),
    customModels: cms.map((m) => ({
      id: m.id,
      providerName: m.providerName,
      modelId: m.modelId,
      name: m.name,
      pricing: m.pricing,
      contextLength: m.contextLength,
      capabilities: m.capabilities,
    })),
    providerKeys: pks.map((p) => ({ id: p.id, provider: p.provider, label: p.label, baseUrl: p.baseUrl, tokenCiphertext: p.tokenCiphertext, weight: p.weight, region: p.region })),
    loadedAt: Date.now(),
  };
}

/** Loads the context of the key with this id (OAuth access tokens name a key by id), or null. */
export async function loadKeyContextById(db: Db, keyId: string): Promise<KeyContext | null> {
  const rows = await db.select({ fp: apiKeys.fingerprint }).from(apiKeys).where(eq(apiKeys.id, keyId)).limit(1);
  const fp = rows[0]?.fp;
  if (!fp) return null;
  const found = await loadKeyContext(db, fp);
  return found.found ? found.context : null;
}

/** `loadKeyContextById` near the caller: a replica, and the primary when the replica has no such key. */
export async function readKeyContextById(d1: D1Database, keyId: string): Promise<KeyContext | null> {
  const near = await loadKeyContextById(replicaReads(d1), keyId).catch(() => null);
  return near ?? loadKeyContextById(primaryReads(d1), keyId);
}
