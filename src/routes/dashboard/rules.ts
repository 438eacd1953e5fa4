/**
 * IAM rules from the dashboard, the same routes as the master API's (spec section 5, rule 6):
 * owners and admins set member and team rules; an admin cannot change an owner's member rules
 * (403, reading them is allowed); developers manage no member or team rules (403), and the rules
 * of the keys they may see (their own).
 *
 *   /api/keys/{id}/iam[/{ruleId}]   /api/members/{member}/iam[/{ruleId}]   /api/teams/{id}/iam[/{ruleId}]
 */
import type { Context, MiddlewareHandler } from "hono";
import type { DashboardEnv } from "./types";
import { getDb } from "../../db/client";
import { forbidden } from "../../errors/api-error";
import { resolveMemberTarget, resolveTeamTarget } from "../../iam/rules";
import { buildRuleRoutes } from "../master/iam";
import { getKeyRow } from "../../keys/lookup";
import { ownerFilter } from "./keys";

const orgOf = (c: Context<DashboardEnv>) => c.get("session").organizationId;

/** Developers have no say over members, teams, their rules, provider keys or custom providers. */
export const requireManager: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (c.get("session").role === "developer") throw forbidden("Only owners and admins manage members, teams and their rules, provider keys and custom providers.", "role_required");
  await next();
};

export const dashboardRuleRoutes = buildRuleRoutes<DashboardEnv>([
  {
    path: "/keys/:ref/iam",
    resolve: async (c, ref) => {
      const s = c.get("session");
      const row = await getKeyRow(getDb(c.env.DB), s.organizationId, ref, ownerFilter(s));
      return { organizationId: s.organizationId, level: "key", targetId: row.id };
    },
  },
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
