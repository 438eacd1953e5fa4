import { eq, exists, sql, type SQL } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { insertWhere } from "../db/insert-where";
import type { ApiError } from "../errors/api-error";
import { apiKeys, iamRules, keySpend, type KeyKind, type PeriodUnit, type RuleType, type RuleValue } from "../db/schema";
import { fingerprint, newGatewaySecret, newSessionSecret, prefixHint } from "../lib/crypto";
import { newId } from "../lib/ids";
import { requireHashSecret } from "../lib/crypto";
import { syncKeys } from "./sync";

export interface NewKeyInput {
  organizationId: string;
  projectId: string;
  createdBy: string;
  description?: string;
  kind?: KeyKind;
  expiresAt?: number | null;
  usageLimit?: string | null;
  periodUsageLimit?: string | null;
  periodUsageDurationValue?: number | null;
  periodUsageDurationUnit?: PeriodUnit | null;
  /** Budget alert threshold (percent); null: the organization's. */
  alertThresholdPercent?: number | null;
  /** The key's own rate limits (null: only the organization's). */
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
  iamRules?: Array<{ ruleType: RuleType; ruleValue: RuleValue; status?: "active" | "inactive" }>;
  /** Who sets the limits (default `manager`: owner, admin or master API); see src/keys/update.ts. */
  actor?: KeyActor;
  /** An end-user session (`kind: "session"`, src/platform/sessions.ts): a `swbs_` token. */
  session?: { endUserId: string; platformKeyId: string } | undefined;
  /**
   * Conditions the key is written under, checked by D1 in the insert itself, so a change that
   * commits while the key is being created (its project deleted, its minting `sk_` key revoked)
   * either comes first and the key is not written, or comes after and sees the key. When one
   * fails, the first failing condition's refusal is thrown.
   */
  writeOnlyIf?: WriteCondition[] | undefined;
}

export interface WriteCondition {
  holds: SQL;
  refusal: ApiError;
}

export type KeyRow = typeof apiKeys.$inferSelect;

/** `manager`: an owner, an admin or the master API; `developer`: a developer on their own key. */
export type KeyActor = "manager" | "developer";

/**
 * Creates a gateway key: stores only the fingerprint, registers it with its KeyState DO, and
 * returns the row plus the secret (the only time the secret exists outside the caller).
 * Input is assumed validated by the route.
 */
export async function createGatewayKey(env: Env, input: NewKeyInput): Promise<{ row: KeyRow; token: string }> {
  const token = input.session ? newSessionSecret() : newGatewaySecret();
  const fp = await fingerprint(requireHashSecret(env), token);
  const db = getDb(env.DB);
  const id = newId("key");
  const now = Date.now();
  const guards = input.writeOnlyIf ?? [];
  const keyWhere = guards.length ? sql.join(guards.map((g) => sql`(${g.holds})`), sql` AND `) : sql`1`;
  const insertKey = insertWhere(
    db,
    apiKeys,
    {
      id,
      organizationId: input.organizationId,
      projectId: input.projectId,
      createdBy: input.createdBy,
      description: input.description ?? "",
      kind: input.kind ?? "standard",
      status: "active",
      fingerprint: fp,
      prefixHint: prefixHint(token),
      expiresAt: input.expiresAt ?? null,
      usageLimit: input.usageLimit ?? null,
      periodUsageLimit: input.periodUsageLimit ?? null,
      periodUsageDurationValue: input.periodUsageDurationValue ?? null,
      periodUsageDurationUnit: input.periodUsageDurationUnit ?? null,
      alertThresholdPercent: input.alertThresholdPercent ?? null,
      requestsPerMinute: input.requestsPerMinute ?? null,
      tokensPerMinute: input.tokensPerMinute ?? null,
      endUserId: input.session?.endUserId ?? null,
      platformKeyId: input.session?.platformKeyId ?? null,
      limitsSetByManager: (input.actor ?? "manager") === "manager" && (input.usageLimit != null || input.periodUsageLimit != null),
      expirySetByManager: (input.actor ?? "manager") === "manager" && input.expiresAt != null,
      createdAt: now,
      updatedAt: now,
    },
    keyWhere,
  ).returning();
  // The rest of the batch (one transaction) is written only with the key.
  const keyWritten = exists(db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id)));
  const rules = (input.iamRules ?? []).map((r) =>
    insertWhere(
      db,
      iamRules,
      { id: newId("iam"), organizationId: input.organizationId, level: "key", targetId: id, ruleType: r.ruleType, ruleValue: r.ruleValue, status: r.status ?? "active" },
      keyWritten,
    ),
  );
  // Its settled spend starts at zero in D1 (key lists read it there; the key's object reports changes).
  const spend = insertWhere(db, keySpend, { apiKeyId: id, updatedAt: now }, keyWritten);
  const [inserted] = await db.batch([insertKey, spend, ...rules]);
  const row = inserted[0];
  if (!row) throw await failedCondition(db, guards);
  await syncKeys(env, [row]);
  return { row, token };
}

/**
 * Which condition refused the write. Read after the batch: the conditions only ever go from true
 * to false (a revoked key stays revoked, a deleted project stays deleted, a rolled secret never
 * returns), so one that is false now was false when the insert ran, or became so since.
 */
async function failedCondition(db: ReturnType<typeof getDb>, guards: WriteCondition[]): Promise<Error> {
  for (const g of guards) {
    const row = await db.get<{ held: number } | null>(sql`SELECT CASE WHEN ${g.holds} THEN 1 ELSE 0 END AS held`);
    if (!row || row.held !== 1) return g.refusal;
  }
  return new Error("key insert returned no row");
}

/** The public view of a key: never the secret or its fingerprint. */
export function publicKey(row: KeyRow) {
  return {
    id: row.id,
    object: "api_key" as const,
    description: row.description,
    projectId: row.projectId,
    organizationId: row.organizationId,
    createdBy: row.createdBy,
    kind: row.kind,
    status: row.status,
    maskedKey: row.prefixHint,
    expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt).toISOString(),
    /** Past its TTL (spec section 3 "expired"); the expiry job also marks such keys inactive. */
    expired: row.expiresAt !== null && row.expiresAt <= Date.now(),
    lastRolledAt: row.lastRolledAt === null ? null : new Date(row.lastRolledAt).toISOString(),
    usageLimit: row.usageLimit,
    periodUsageLimit: row.periodUsageLimit,
    periodUsageDurationValue: row.periodUsageDurationValue,
    periodUsageDurationUnit: row.periodUsageDurationUnit,
    /** The key's own rate limits (null: only the organization's apply). */
    requestsPerMinute: row.requestsPerMinute,
    tokensPerMinute: row.tokensPerMinute,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}
