/**
 * The platform API of an app's backend (docs/platform-keys.md), authenticated
 * with a platform secret key (`Authorization: Bearer sk_...`), scoped to that key's project:
 *
 *   POST /v1/sessions {endUserId, expiresIn?, spendCap, iamRules?, projectId?}  -> 201 {session: {..., token}}
 *   GET /v1/sessions[?endUserId=&limit=]      DELETE /v1/sessions/{id}      DELETE /v1/sessions?endUserId=...
 *
 * No CORS: a platform secret key never belongs in a browser (the session token does).
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import { validate, validateBody } from "../errors/validation";
import { requirePlatformKey } from "../platform/platform-keys";
import { endUserId, listSessions, mintSession, revokeEndUserSessions, revokeSession, sessionListQuery, sessionMintBody } from "../platform/sessions";

const idParam = z.object({ id: z.string().min(1).max(64) });
const revokeQuery = z.object({ endUserId });

export const platformSessionRoutes = new Hono<AppEnv>();
platformSessionRoutes.use("*", requirePlatformKey);

const scopeOf = (p: AppEnv["Variables"]["platform"]) => ({ organizationId: p.organizationId, projectId: p.projectId });

platformSessionRoutes.post("/", validateBody(sessionMintBody), async (c) => c.json({ session: await mintSession(c.env, c.get("platform"), c.req.valid("json")) }, 201));

platformSessionRoutes.get("/", validate("query", sessionListQuery.omit({ projectId: true })), async (c) =>
  c.json({ sessions: await listSessions(c.env, scopeOf(c.get("platform")), c.req.valid("query")) }),
);

platformSessionRoutes.delete("/:id", validate("param", idParam), async (c) =>
  c.json({ session: await revokeSession(c.env, scopeOf(c.get("platform")), c.req.valid("param").id) }),
);

platformSessionRoutes.delete("/", validate("query", revokeQuery), async (c) => {
  const { endUserId: user } = c.req.valid("query");
  return c.json({ endUserId: user, revoked: await revokeEndUserSessions(c.env, scopeOf(c.get("platform")), user) });
});
