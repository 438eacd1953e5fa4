/**
 * Platform secret keys (`sk_...`; docs/platform-keys.md): an app's backend holds
 * one to mint short-lived end-user sessions for one project (./sessions.ts). Lifecycle: create
 * (secret shown once, HMAC fingerprint stored), list, roll (same key, new secret), revoke (the
 * key and every session it minted stop at once). Authentication reads D1 by fingerprint on every
 * call (no cache), like master keys.
 */
import type { MiddlewareHandler } from "hono";
import { and, asc, eq, isNull, lt, or, sql } from "drizzle-orm";
import * as z from "zod";
import type { AppEnv, PlatformContext } from "../app-types";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, members, platformKeys, projects } from "../db/schema";
import { ApiError, notFound, unauthorized } from "../errors/api-error";
import { fingerprint, looksLikePlatformKey, newPlatformSecret, prefixHint } from "../lib/crypto";
import { newId } from "../lib/ids";
import { extractBearer, requireHashSecret } from "../auth/gateway-key";
import { revokeSessionsWhere } from "./sessions";

type PlatformKeyRow = typeof platformKeys.$inferSelect;

export const platformKeyCreateBody = z.object({
  projectId: z.string().min(1).max(64),
  description: z.string().trim().max(256).default(""),
  /** The member the sessions act for (member and team rules); default the organization's first owner. */
  memberId: z.string().min(1).max(64).optional(),
});

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function publicPlatformKey(row: PlatformKeyRow) {
  return {
    id: row.id,
    object: "platform_key" as const,
    prefix: row.prefixHint,
    description: row.description,
    projectId: row.projectId,
    createdBy: row.createdBy,
    status: row.revokedAt === null ? ("active" as const) : ("revoked" as const),
    createdAt: new Date(row.createdAt).toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    lastRolledAt: iso(row.lastRolledAt),
    revokedAt: iso(row.revokedAt),
  };
}

export type PublicPlatformKey = ReturnType<typeof publicPlatformKey>;

export async function createPlatformKey(env: Env, organizationId: string, body: z.infer<typeof platformKeyCreateBody>) {
  const db = getDb(env.DB);
  const project = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, body.projectId), eq(projects.organizationId, organizationId), isNull(projects.deletedAt)))
    .get();
  if (!project) throw notFound(`Project '${body.projectId}' not found`, "project_not_found");
  const member = body.memberId
    ? await db.select({ id: members.id }).from(members).where(and(eq(members.id, body.memberId), eq(members.organizationId, organizationId))).get()
    : await db
        .select({ id: members.id })
        .from(members)
        .where(and(eq(members.organizationId, organizationId), eq(members.role, "owner")))
        .orderBy(asc(members.createdAt), asc(members.id))
        .get();
  if (!member) throw notFound(body.memberId ? `Member '${body.memberId}' not found` : "The organization has no owner", "member_not_found");
  const token = newPlatformSecret();
  const [row] = await db
    .insert(platformKeys)
    .values({
      id: newId("pk"),
      organizationId,
      projectId: project.id,
      createdBy: member.id,
      description: body.description,
      fingerprint: await fingerprint(requireHashSecret(env), token),
      prefixHint: prefixHint(token),
      createdAt: Date.now(),
    })
    .returning();
  return { ...publicPlatformKey(row!), token };
}

export async function listPlatformKeys(env: Env, organizationId: string): Promise<Array<PublicPlatformKey & { activeSessions: number }>> {
  const db = getDb(env.DB);
  const active = sql<number>`(SELECT COUNT(*) FROM ${apiKeys} WHERE ${apiKeys.platformKeyId} = ${platformKeys.id} AND ${apiKeys.status} = 'active' AND (${apiKeys.expiresAt} IS NULL OR ${apiKeys.expiresAt} > ${Date.now()}))`;
  const rows = await db
    .select({ key: platformKeys, activeSessions: active })
    .from(platformKeys)
    .where(eq(platformKeys.organizationId, organizationId))
    .orderBy(asc(platformKeys.createdAt), asc(platformKeys.id));
  return rows.map((r) => ({ ...publicPlatformKey(r.key), activeSessions: Number(r.activeSessions) }));
}

async function getPlatformKeyRow(env: Env, organizationId: string, id: string): Promise<PlatformKeyRow> {
  const row = await getDb(env.DB)
    .select()
    .from(platformKeys)
    .where(and(eq(platformKeys.id, id), eq(platformKeys.organizationId, organizationId)))
    .get();
  if (!row) throw notFound(`Platform key '${id}' not found.`, "platform_key_not_found");
  return row;
}

/** A new secret for the same key; the old secret is refused at once. Sessions it minted keep working. */
export async function rollPlatformKey(env: Env, organizationId: string, id: string) {
  await getPlatformKeyRow(env, organizationId, id);
  const token = newPlatformSecret();
  const [row] = await getDb(env.DB)
    .update(platformKeys)
    .set({ fingerprint: await fingerprint(requireHashSecret(env), token), prefixHint: prefixHint(token), lastRolledAt: Date.now() })
    .where(and(eq(platformKeys.id, id), eq(platformKeys.organizationId, organizationId), isNull(platformKeys.revokedAt)))
    .returning();
  if (!row) throw new ApiError(409, `Platform key '${id}' is revoked; create a new one.`, { type: "invalid_request_error", code: "platform_key_revoked", param: "id" });
  return { ...publicPlatformKey(row), token };
}

/** Revokes the key and every session it minted (a leaked key may have minted some). */
export async function revokePlatformKey(env: Env, organizationId: string, id: string): Promise<{ platformKey: PublicPlatformKey; revokedSessions: number }> {
  const before = await getPlatformKeyRow(env, organizationId, id);
  const [row] = await getDb(env.DB)
    .update(platformKeys)
    .set({ revokedAt: before.revokedAt ?? Date.now() })
    .where(and(eq(platformKeys.id, id), eq(platformKeys.organizationId, organizationId)))
    .returning();
  const revokedSessions = await revokeSessionsWhere(env, and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.platformKeyId, id)));
  return { platformKey: publicPlatformKey(row!), revokedSessions };
}

// ---------- authentication of the backend's calls (`Authorization: Bearer sk_...`) ----------

export type { PlatformContext };

const LAST_USED_RESOLUTION_MS = 60_000;

export const requirePlatformKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const secret = extractBearer(c);
  if (!secret) throw unauthorized("Missing platform secret key: send 'Authorization: Bearer sk_...'.", "missing_api_key");
  const hashSecret = requireHashSecret(c.env);
  if (!looksLikePlatformKey(secret)) throw unauthorized("Invalid platform secret key.", "invalid_platform_key");
  const row = await getDb(c.env.DB)
    .select()
    .from(platformKeys)
    .where(and(eq(platformKeys.fingerprint, await fingerprint(hashSecret, secret)), isNull(platformKeys.revokedAt)))
    .get();
  if (!row) throw unauthorized("Invalid platform secret key.", "invalid_platform_key");
  c.set("platform", { platformKeyId: row.id, organizationId: row.organizationId, projectId: row.projectId, createdBy: row.createdBy, fingerprint: row.fingerprint });
  const now = Date.now();
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    const stale = or(isNull(platformKeys.lastUsedAt), lt(platformKeys.lastUsedAt, now - LAST_USED_RESOLUTION_MS));
    const write = getDb(c.env.DB).update(platformKeys).set({ lastUsedAt: now }).where(and(eq(platformKeys.id, row.id), stale)).run();
    c.executionCtx.waitUntil(write.then(() => undefined, (err: unknown) => console.error("platform key last-use update failed", err instanceof Error ? err.message : String(err))));
  }
  await next();
};
