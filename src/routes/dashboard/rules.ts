/**
 * Member and team IAM rules from the dashboard (spec section 5, rule 6): owners and admins set
 * them; an admin cannot change an owner's member rules (403, reading them is allowed);
 * developers manage no rules (403).
 *
 *   /api/members/{member}/iam[/{ruleId}]    /api/teams/{id}/iam[/{ruleId}]
 */
import type { Context, MiddlewareHandler } from "hono";
import type { DashboardEnv } from "./types";
import { getDb } from "../../db/client";
import { forbidden } from "../../errors/api-error";
import { resolveMemberTarget, resolveTeamTarget } from "../../iam/rules";
import { buildRuleRoutes } from "../master/iam";

const orgOf = (c: Context<DashboardEnv>) => c.get("session").organizationId;

/** Developers have no say over member or team rules. */
export const requireManager: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (c.get("session").role === "developer") throw forbidden("Only owners and admins manage member and team rules.", "role_required");
  await next();
};

export const dashboardRuleRoutes = buildRuleRoutes<DashboardEnv>([
  {
    path: "/members/:ref/iam",
    resolve: (c, ref) => resolveMemberTarget(getDb(c.env.DB), orgOf(c), ref),
    assertWritable: (c, target) => {
      if (target.role === "owner" && c.get("session").role !== "owner") {
        throw forbidden("Admins cannot modify an owner's member rules; ask an owner.", "owner_rules");
      }
    },
  },
  { path: "/teams/:ref/iam", resolve: (c, ref) => resolveTeamTarget(getDb(c.env.DB), orgOf(c), ref) },
]);
