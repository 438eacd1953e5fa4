/**
 * In-app budget alerts of an organization, newest first; developers see alerts of their own keys
 * only. Shared by `GET /api/notifications` and the dashboard's Organization page.
 */
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Env } from "../env";
import type { SessionInfo } from "../auth/session";
import { getDb } from "../db/client";
import { apiKeys, notifications } from "../db/schema";

export async function listNotifications(env: Env, s: Pick<SessionInfo, "organizationId" | "memberId" | "role">, limit: number) {
  const db = getDb(env.DB);
  const conds = [eq(notifications.organizationId, s.organizationId)];
  if (s.role === "developer") {
    conds.push(inArray(notifications.apiKeyId, db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.createdBy, s.memberId))));
  }
  const rows = await db
    .select()
    .from(notifications)
    .where(and(...conds))
    .orderBy(desc(notifications.createdAt), desc(notifications.id))
    .limit(limit);
  return rows.map((n) => ({
    id: n.id,
    object: "notification" as const,
    kind: n.kind,
    apiKeyId: n.apiKeyId,
    limitType: n.limitType,
    windowStart: n.windowStart === 0 ? null : new Date(n.windowStart).toISOString(),
    message: n.message,
    emailedAt: n.emailedAt === null ? null : new Date(n.emailedAt).toISOString(),
    readAt: n.readAt === null ? null : new Date(n.readAt).toISOString(),
    createdAt: new Date(n.createdAt).toISOString(),
  }));
}
