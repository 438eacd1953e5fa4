/**
 * Master API: platform secret keys (`sk_`), the end-user sessions they mint and usage by end user
 * (docs/platform-keys.md).
 *
 *   POST, GET /v1/master/platform-keys   POST /v1/master/platform-keys/{id}/roll   DELETE /v1/master/platform-keys/{id}
 *   GET /v1/master/end-user-sessions[?endUserId=&projectId=]   DELETE /v1/master/end-user-sessions/{id}
 *   DELETE /v1/master/end-user-sessions?endUserId=...[&projectId=]   GET /v1/master/end-users/usage
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import { createPlatformKey, listPlatformKeys, platformKeyCreateBody, revokePlatformKey, rollPlatformKey } from "../../platform/platform-keys";
import { endUserId, endUserUsage, endUserUsageQuery, listSessions, revokeEndUserSessions, revokeSession, sessionListQuery } from "../../platform/sessions";

const idParam = z.object({ id: z.string().min(1).max(64) });
const revokeQuery = z.object({ endUserId, projectId: z.string().min(1).max(64).optional() });

export const masterPlatformRoutes = new Hono<AppEnv>();
const r = masterPlatformRoutes;
const orgOf = (c: { get: (k: "master") => AppEnv["Variables"]["master"] }) => c.get("master").organizationId;

r.post("/platform-keys", validateBody(platformKeyCreateBody), async (c) => c.json({ secretKey: await createPlatformKey(c.env, orgOf(c), c.req.valid("json")) }, 201));
r.get("/platform-keys", async (c) => c.json({ secretKeys: await listPlatformKeys(c.env, orgOf(c)) }));
r.post("/platform-keys/:id/roll", validate("param", idParam), async (c) => c.json({ secretKey: await rollPlatformKey(c.env, orgOf(c), c.req.valid("param").id) }));
r.delete("/platform-keys/:id", validate("param", idParam), async (c) => {
  const { platformKey, revokedSessions } = await revokePlatformKey(c.env, orgOf(c), c.req.valid("param").id);
  return c.json({ secretKey: platformKey, revokedSessions });
});

r.get("/end-user-sessions", validate("query", sessionListQuery), async (c) => c.json({ sessions: await listSessions(c.env, { organizationId: orgOf(c) }, c.req.valid("query")) }));
r.delete("/end-user-sessions/:id", validate("param", idParam), async (c) => c.json({ session: await revokeSession(c.env, { organizationId: orgOf(c) }, c.req.valid("param").id) }));
r.delete("/end-user-sessions", validate("query", revokeQuery), async (c) => {
  const q = c.req.valid("query");
  return c.json({ endUserId: q.endUserId, revoked: await revokeEndUserSessions(c.env, { organizationId: orgOf(c), projectId: q.projectId }, q.endUserId) });
});

r.get("/end-users/usage", validate("query", endUserUsageQuery), async (c) => c.json(await endUserUsage(c.env, orgOf(c), c.req.valid("query"))));
