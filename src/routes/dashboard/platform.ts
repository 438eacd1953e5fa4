/**
 * Platform secret keys and end-user sessions from the dashboard: owners and
 * admins (developers get 403), the same services as the master API (src/platform/).
 *
 *   GET, POST /api/platform-keys   POST /api/platform-keys/{id}/roll   DELETE /api/platform-keys/{id}
 *   DELETE /api/end-user-sessions/{id}   DELETE /api/end-user-sessions?endUserId=...
 */
import { Hono, type MiddlewareHandler } from "hono";
import * as z from "zod";
import type { DashboardEnv } from "./types";
import { forbidden } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { createPlatformKey, listPlatformKeys, platformKeyCreateBody, revokePlatformKey, rollPlatformKey } from "../../platform/platform-keys";
import { endUserId, revokeEndUserSessions, revokeSession } from "../../platform/sessions";

export const requireOrgAdmin: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (c.get("session").role === "developer") throw forbidden("Only owners and admins manage platform keys and end-user sessions.", "role_required");
  await next();
};

export const PLATFORM_PATHS = ["/platform-keys", "/platform-keys/*", "/end-user-sessions", "/end-user-sessions/*"] as const;

export const dashboardPlatformRoutes = new Hono<DashboardEnv>();
const r = dashboardPlatformRoutes;
const orgOf = (c: { get: (k: "session") => DashboardEnv["Variables"]["session"] }) => c.get("session").organizationId;

r.get("/platform-keys", async (c) => c.json({ secretKeys: await listPlatformKeys(c.env, orgOf(c)) }));
r.post("/platform-keys", validateBody(platformKeyCreateBody), async (c) => c.json({ secretKey: await createPlatformKey(c.env, orgOf(c), c.req.valid("json")) }, 201));
r.post("/platform-keys/:id/roll", async (c) => c.json({ secretKey: await rollPlatformKey(c.env, orgOf(c), c.req.param("id")) }));
r.delete("/platform-keys/:id", async (c) => {
  const { platformKey, revokedSessions } = await revokePlatformKey(c.env, orgOf(c), c.req.param("id"));
  return c.json({ secretKey: platformKey, revokedSessions });
});
r.delete("/end-user-sessions/:id", async (c) => c.json({ session: await revokeSession(c.env, { organizationId: orgOf(c) }, c.req.param("id")) }));
r.delete("/end-user-sessions", validate("query", z.object({ endUserId })), async (c) => {
  const { endUserId: user } = c.req.valid("query");
  return c.json({ endUserId: user, revoked: await revokeEndUserSessions(c.env, { organizationId: orgOf(c) }, user) });
});
