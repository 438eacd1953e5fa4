/**
 * `GET /api/organization` (every member; the credit balance only for owners and admins) and
 * `PATCH /api/organization` (owners and admins): the same action as `PATCH /v1/master/organization`.
 */
import { Hono } from "hono";
import type { DashboardEnv } from "./types";
import type { SessionInfo } from "../../auth/session";
import { forbidden } from "../../errors/api-error";
import { validateBody } from "../../errors/validation";
import { publicOrganization } from "../../organizations/view";
import { loadOrganization, organizationPatchBody, updateOrganization } from "../../actions/organization";
import { creditLedgerView } from "../../billing/credit-ledger";

export const isOrgAdmin = (s: SessionInfo): boolean => s.role === "owner" || s.role === "admin";

export const dashboardOrganizationRoutes = new Hono<DashboardEnv>();

dashboardOrganizationRoutes.get("/", async (c) => {
  const s = c.get("session");
  const { credits, ...org } = publicOrganization(await loadOrganization(c.env, s.organizationId));
  return c.json({ organization: isOrgAdmin(s) ? { ...org, credits } : org });
});

dashboardOrganizationRoutes.patch("/", validateBody(organizationPatchBody), async (c) => {
  const s = c.get("session");
  if (!isOrgAdmin(s)) throw forbidden("Only owners and admins can change organization settings.", "role_required");
  return c.json({ organization: await updateOrganization(c.env, s.organizationId, c.req.valid("json")) });
});

/** `GET /api/organization/credits`: balance and ledger, owners and admins (who see the balance). */
dashboardOrganizationRoutes.get("/credits", async (c) => {
  const s = c.get("session");
  if (!isOrgAdmin(s)) throw forbidden("Only owners and admins see the organization's credits.", "role_required");
  return c.json(await creditLedgerView(c.env, s.organizationId));
});
