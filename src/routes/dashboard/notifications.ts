/** `GET /api/notifications`: budget alerts of the organization (developers: their own keys only). */
import { Hono } from "hono";
import { and, desc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { DashboardEnv } from "./types";
import { getDb } from "../../db/client";
import { apiKeys, notifications } from "../../db/schema";
import { validate } from "../../errors/validation";

const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });

export const dashboardNotificationRoutes = new Hono<DashboardEnv>();

dashboardNotificationRoutes.get("/", validate("query", listQuery), async (c) => {
  const s = c.get("session");
  const db = getDb(c.env.DB);
  const conds = [eq(notifications.organizationId, s.organizationId)];
  if (s.role === "developer") {
    conds.push(inArray(notifications.apiKeyId, db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.createdBy, s.memberId))));
  }
  const rows = await db
    .select()
    .from(notifications)
    .where(and(...conds))
    .orderBy(desc(notifications.createdAt), desc(notifications.id))
    .limit(c.req.valid("query").limit);
  return c.json({
    notifications: rows.map((n) => ({
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
    })),
  });
});
