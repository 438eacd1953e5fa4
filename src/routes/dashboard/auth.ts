/**
 * `POST /api/auth/sign-in` and `POST /api/auth/sign-out` (contract section 5). Password checks,
 * membership rules and brute-force limits: src/auth/sign-in.ts. The session lives in D1, the
 * cookie only holds a random token.
 */
import { Hono } from "hono";
import * as z from "zod";
import type { DashboardEnv } from "./types";
import { validateBody } from "../../errors/validation";
import { clearedSessionCookie, createSession, destroySession } from "../../auth/session";
import { assertSameOrigin } from "../../auth/csrf";
import { signInWithPassword } from "../../auth/sign-in";

const signInBody = z.object({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(1024),
  organizationId: z.string().min(1).max(64).optional(),
});

export const dashboardAuthRoutes = new Hono<DashboardEnv>();

dashboardAuthRoutes.post("/sign-in", validateBody(signInBody), async (c) => {
  assertSameOrigin(c);
  const body = c.req.valid("json");
  const { user, membership } = await signInWithPassword(c.env, c.req.raw.headers, body);
  const session = await createSession(c.env, { userId: user.id, organizationId: membership.organizationId, memberId: membership.memberId });
  c.header("set-cookie", session.cookie);
  c.header("cache-control", "no-store");
  return c.json({
    user: { id: user.id, email: user.email, name: user.name },
    organization: { id: membership.organizationId, name: membership.organizationName },
    member: { id: membership.memberId, role: membership.role },
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAt).toISOString(),
  });
});

dashboardAuthRoutes.post("/sign-out", async (c) => {
  assertSameOrigin(c);
  await destroySession(c.env, c.req.header("cookie"));
  c.header("set-cookie", clearedSessionCookie());
  return c.body(null, 204);
});
