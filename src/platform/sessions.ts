/**
 * End-user sessions (docs/platform-keys.md). A backend holding a platform secret
 * key mints a session for one of its end users: a gateway key of kind `session` (`swbs_...`
 * token) in the platform key's project, created through the same path as every gateway key
 * (src/keys/issue.ts), so it authenticates, is admitted, metered, logged and revoked like one:
 *  - expiry: at most 24 h (`expiresAt`, checked locally and by the key's object);
 *  - spend cap: the session key's all-time `usageLimit`, enforced by its KeyState object with the
 *    admission rules of every key (docs/admission.md); the cap is per session;
 *  - IAM restrictions: key-level rules copied from the mint request; the platform key's member's
 *    member and team rules apply too;
 *  - the end user id is on the key, and on every request log row (`end_user_id`).
 * Sessions are never listed as API keys; they are revoked one by one or per end user.
 */
import { and, desc, eq, exists, gte, isNull, lt, ne, sql, type SQL } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, keySpend, platformKeys, usageHourly } from "../db/schema";
import { notFound, unauthorized } from "../errors/api-error";
import { ruleBodySchema } from "../iam/rule-body";
import { usdAmount } from "../keys/limits";
import { issueKey } from "../keys/issue";
import { syncKeys } from "../keys/sync";
import { evictContext } from "../auth/key-cache";
import { formatUsd, picoFromDb } from "../billing/money";
import type { KeyRow } from "../keys/create";

/** Longest session: 24 hours. */
export const MAX_SESSION_SECONDS = 86_400;

export const endUserId = z.string().trim().min(1).max(128).regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces");

export const sessionMintBody = z.object({
  endUserId,
  /** Must be the platform key's project (default). */
  projectId: z.string().min(1).max(64).optional(),
  /** Seconds, 60..86400 (24 h); default 3600. */
  expiresIn: z.number().int().min(60).max(MAX_SESSION_SECONDS).default(3600),
  /** What this session may spend, decimal USD. */
  spendCap: usdAmount,
  iamRules: z.array(ruleBodySchema).max(20).optional(),
});

export type SessionMint = z.infer<typeof sessionMintBody>;

export interface Minter {
  platformKeyId: string;
  organizationId: string;
  projectId: string;
  createdBy: string;
  /** The fingerprint of the secret the mint authenticated with (a rolled secret mints nothing). */
  fingerprint: string;
}

export function publicSession(row: KeyRow, spentPico?: string | null) {
  return {
    id: row.id,
    object: "end_user_session" as const,
    endUserId: row.endUserId,
    projectId: row.projectId,
    platformKeyId: row.platformKeyId,
    status: row.status === "active" && (row.expiresAt === null || row.expiresAt > Date.now()) ? "active" : row.status === "deleted" ? "revoked" : "expired",
    spendCap: row.usageLimit,
    ...(spentPico === undefined ? {} : { spent: spentPico === null ? null : formatUsd(picoFromDb(spentPico)) }),
    maskedToken: row.prefixHint,
    expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt).toISOString(),
    createdAt: new Date(row.createdAt).toISOString(),
    revokedAt: row.deletedAt === null ? null : new Date(row.deletedAt).toISOString(),
  };
}

/** The minting key is still live, with the secret the mint authenticated with. */
const platformKeyLive = (env: Env, minter: Minter): SQL =>
  exists(
    getDb(env.DB)
      .select({ id: platformKeys.id })
      .from(platformKeys)
      .where(and(eq(platformKeys.id, minter.platformKeyId), eq(platformKeys.fingerprint, minter.fingerprint), isNull(platformKeys.revokedAt))),
  );

/** Mints a session for `body.endUserId`; the token is in the answer only. */
export async function mintSession(env: Env, minter: Minter, body: SessionMint, now = Date.now()) {
  if (body.projectId !== undefined && body.projectId !== minter.projectId) {
    // Another project (of this or another organization) is not this key's to mint for.
    throw notFound(`Project '${body.projectId}' not found for this platform key.`, "project_not_found");
  }
  const { row, token } = await issueKey(
    env,
    {
      organizationId: minter.organizationId,
      projectId: minter.projectId,
      memberId: minter.createdBy,
      description: `Session of ${body.endUserId}`,
      kind: "session",
      expiresAt: now + body.expiresIn * 1000,
      usageLimit: body.spendCap,
      iamRules: body.iamRules,
      session: { endUserId: body.endUserId, platformKeyId: minter.platformKeyId },
      // A revoke (or roll) that commits between this mint's authentication and its insert would
      // otherwise miss the session in its sweep: the insert itself requires the key still live
      // with the secret used, so revoke and mint are exclusive (docs/security.md).
      writeOnlyIf: [{ holds: platformKeyLive(env, minter), refusal: unauthorized("Invalid platform secret key.", "invalid_platform_key") }],
    },
    now,
  );
  return { ...publicSession(row), token };
}

const sessionsOf = (organizationId: string): SQL => and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.kind, "session"))!;

/**
 * Revokes the sessions matching `where` (always narrowed to sessions not yet revoked): their
 * KeyState objects learn it before this returns, so the next request with a token is a 401.
 */
export async function revokeSessionsWhere(env: Env, where: SQL | undefined, now = Date.now()): Promise<number> {
  const rows = await getDb(env.DB)
    .update(apiKeys)
    .set({ status: "deleted", deletedAt: now, version: sql`${apiKeys.version} + 1`, updatedAt: now })
    .where(and(where, eq(apiKeys.kind, "session"), ne(apiKeys.status, "deleted")))
    .returning();
  await syncKeys(env, rows);
  for (const r of rows) evictContext(r.fingerprint);
  return rows.length;
}

export interface SessionScope {
  organizationId: string;
  /** The platform key's project (sk_ calls); absent: the whole organization (master API). */
  projectId?: string | undefined;
}

const scopeWhere = (s: SessionScope): SQL => (s.projectId ? and(sessionsOf(s.organizationId), eq(apiKeys.projectId, s.projectId))! : sessionsOf(s.organizationId));

export async function revokeSession(env: Env, scope: SessionScope, id: string) {
  const db = getDb(env.DB);
  const row = await db.select().from(apiKeys).where(and(scopeWhere(scope), eq(apiKeys.id, id))).get();
  if (!row) throw notFound(`Session '${id}' not found.`, "session_not_found");
  await revokeSessionsWhere(env, eq(apiKeys.id, id));
  const after = await db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
  return publicSession(after ?? row);
}

export async function revokeEndUserSessions(env: Env, scope: SessionScope, user: string): Promise<number> {
  return revokeSessionsWhere(env, and(scopeWhere(scope), eq(apiKeys.endUserId, user)));
}

export const sessionListQuery = z.object({
  endUserId: endUserId.optional(),
  projectId: z.string().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** Sessions, newest first, with their settled spend (as key lists read it, src/keys/spend.ts). */
export async function listSessions(env: Env, scope: SessionScope, q: z.infer<typeof sessionListQuery>) {
  const conds = [scopeWhere(scope)];
  if (q.projectId) conds.push(eq(apiKeys.projectId, q.projectId));
  if (q.endUserId) conds.push(eq(apiKeys.endUserId, q.endUserId));
  const rows = await getDb(env.DB)
    .select({ key: apiKeys, spent: keySpend.usagePico })
    .from(apiKeys)
    .leftJoin(keySpend, eq(keySpend.apiKeyId, apiKeys.id))
    .where(and(...conds))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .limit(q.limit);
  return rows.map((r) => publicSession(r.key, r.spent));
}

// ---------- usage by end user (analytics) ----------

const DAY_MS = 86_400_000;

export const endUserUsageQuery = z
  .object({
    projectId: z.string().min(1).max(64).optional(),
    endUserId: endUserId.optional(),
    /** ISO dates or date-times; default the last 30 days. */
    from: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
    to: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), { message: "from must be before to", path: ["from"] });

/**
 * Usage grouped by end user, from the hourly aggregates (`usage_hourly`, the analytics store)
 * joined with the session keys: requests, tokens and cost per end user, most expensive first.
 */
export async function endUserUsage(env: Env, organizationId: string, q: z.infer<typeof endUserUsageQuery>, now = Date.now()) {
  const to = q.to ? Date.parse(q.to) : now;
  const from = q.from ? Date.parse(q.from) : to - 30 * DAY_MS;
  const conds = [eq(usageHourly.organizationId, organizationId), gte(usageHourly.hourStart, from - (from % 3_600_000)), lt(usageHourly.hourStart, to), eq(apiKeys.kind, "session")];
  if (q.projectId) conds.push(eq(usageHourly.projectId, q.projectId));
  if (q.endUserId) conds.push(eq(apiKeys.endUserId, q.endUserId));
  const cost = sql<string>`CAST(SUM(${usageHourly.costPico}) AS TEXT)`;
  const rows = await getDb(env.DB)
    .select({
      endUserId: apiKeys.endUserId,
      requests: sql<number>`SUM(${usageHourly.requests})`,
      errors: sql<number>`SUM(${usageHourly.errors})`,
      promptTokens: sql<number>`SUM(${usageHourly.promptTokens})`,
      completionTokens: sql<number>`SUM(${usageHourly.completionTokens})`,
      totalTokens: sql<number>`SUM(${usageHourly.totalTokens})`,
      cost,
      sessions: sql<number>`COUNT(DISTINCT ${usageHourly.apiKeyId})`,
    })
    .from(usageHourly)
    .innerJoin(apiKeys, eq(apiKeys.id, usageHourly.apiKeyId))
    .where(and(...conds))
    .groupBy(apiKeys.endUserId)
    .orderBy(desc(sql`SUM(${usageHourly.costPico})`), apiKeys.endUserId)
    .limit(q.limit);
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    endUsers: rows.map((r) => ({
      endUserId: r.endUserId,
      requests: Number(r.requests),
      errors: Number(r.errors),
      promptTokens: Number(r.promptTokens),
      completionTokens: Number(r.completionTokens),
      totalTokens: Number(r.totalTokens),
      cost: formatUsd(picoFromDb(r.cost)),
      sessions: Number(r.sessions),
    })),
  };
}
