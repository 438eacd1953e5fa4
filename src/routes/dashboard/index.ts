/**
 * Dashboard session API under `/api` (contract section 5). `/api/auth/*` and `/api/memberships/*`
 * are public (with their own origin check); everything else needs the `swb_session` cookie, and
 * state-changing requests also a same-site origin and the session's `x-csrf-token`.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { DashboardEnv } from "./types";
import { readSession } from "../../auth/session";
import { assertCsrfToken, assertSameOrigin, isStateChanging } from "../../auth/csrf";
import { unauthorized } from "../../errors/api-error";
import { dashboardAuthRoutes } from "./auth";
import { dashboardKeyRoutes } from "./keys";
import { dashboardNotificationRoutes } from "./notifications";
import { dashboardMembershipRoutes } from "./memberships";
import { dashboardRuleRoutes, requireManager } from "./rules";
import { dashboardOrganizationRoutes } from "./organization";
import { dashboardOrganizationAdminRoutes, ORGANIZATION_ADMIN_PATHS } from "./organization-admin";
import { dashboardMasterKeyRoutes } from "./master-keys";
import { dashboardPlatformRoutes, PLATFORM_PATHS, requireOrgAdmin } from "./platform";
import { dashboardAuditRoutes } from "../audit-log";
import { dashboardSsoRoutes } from "../sso";
import { dashboardProjectRoutes, PROJECT_PATHS } from "./projects";
import { dashboardPlaygroundRoutes, PLAYGROUND_PATHS } from "./playground";

export const requireSession: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  const session = await readSession(c.env, c.req.header("cookie"));
  if (!session) throw unauthorized("Sign in first: missing or expired session.", "not_authenticated");
  if (isStateChanging(c.req.method)) {
    assertSameOrigin(c);
    assertCsrfToken(c, session.csrfToken);
  }
  c.set("session", session);
  c.header("cache-control", "no-store");
  await next();
};

export const dashboardRoutes = new Hono<DashboardEnv>();
dashboardRoutes.route("/auth", dashboardAuthRoutes);
dashboardRoutes.route("/memberships", dashboardMembershipRoutes);

dashboardRoutes.get("/me", requireSession, (c) => {
  const s = c.get("session");
  return c.json({
    user: { id: s.userId, email: s.email, name: s.name },
    organization: { id: s.organizationId },
    member: { id: s.memberId, role: s.role },
    csrfToken: s.csrfToken,
  });
});
dashboardRoutes.use("/keys/*", requireSession);
dashboardRoutes.use("/notifications", requireSession);
dashboardRoutes.use("/master-keys", requireSession);
dashboardRoutes.use("/master-keys/*", requireSession);
dashboardRoutes.route("/master-keys", dashboardMasterKeyRoutes);
for (const path of PLATFORM_PATHS) dashboardRoutes.use(path, requireSession, requireOrgAdmin);
dashboardRoutes.route("/", dashboardPlatformRoutes);
dashboardRoutes.use("/sso", requireSession);
dashboardRoutes.route("/sso", dashboardSsoRoutes);
dashboardRoutes.use("/audit-log", requireSession);
dashboardRoutes.route("/audit-log", dashboardAuditRoutes);
for (const path of PROJECT_PATHS) dashboardRoutes.use(path, requireSession);
dashboardRoutes.route("/", dashboardProjectRoutes);
for (const path of PLAYGROUND_PATHS) dashboardRoutes.use(path, requireSession);
dashboardRoutes.route("/", dashboardPlaygroundRoutes);
dashboardRoutes.route("/keys", dashboardKeyRoutes);
for (const path of ["/members/:ref/iam", "/members/:ref/iam/*", "/teams/:ref/iam", "/teams/:ref/iam/*"]) {
  dashboardRoutes.use(path, requireSession, requireManager);
}
dashboardRoutes.route("/", dashboardRuleRoutes);
dashboardRoutes.route("/notifications", dashboardNotificationRoutes);
dashboardRoutes.use("/organization", requireSession);
dashboardRoutes.use("/organization/*", requireSession);
dashboardRoutes.route("/organization", dashboardOrganizationRoutes);
for (const path of ORGANIZATION_ADMIN_PATHS) dashboardRoutes.use(path, requireSession, requireManager);
dashboardRoutes.route("/", dashboardOrganizationAdminRoutes);
