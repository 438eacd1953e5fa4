/**
 * Membership acceptance (contract section 5, docs/security.md). The e-mailed one-time token is the
 * credential here, so these routes need no session; like sign-in they refuse cross-site posts.
 *
 *   POST /api/memberships/preview {token}            -> {organization, email, role, passwordRequired}
 *   POST /api/memberships/accept  {token, password?} -> {organization, member, email}
 */
import { Hono } from "hono";
import * as z from "zod";
import type { DashboardEnv } from "./types";
import { validateBody } from "../../errors/validation";
import { assertSameOrigin } from "../../auth/csrf";
import { acceptInvitation, previewInvitation } from "../../organizations/memberships";

const token = z.string().trim().min(1).max(256);

export const dashboardMembershipRoutes = new Hono<DashboardEnv>();

dashboardMembershipRoutes.post("/preview", validateBody(z.object({ token })), async (c) => {
  assertSameOrigin(c);
  c.header("cache-control", "no-store");
  return c.json(await previewInvitation(c.env, c.req.valid("json").token));
});

dashboardMembershipRoutes.post(
  "/accept",
  validateBody(z.object({ token, password: z.string().min(12, "must be at least 12 characters").max(1024).optional() })),
  async (c) => {
    assertSameOrigin(c);
    c.header("cache-control", "no-store");
    const body = c.req.valid("json");
    return c.json(await acceptInvitation(c.env, body.token, body.password));
  },
);
