/**
 * IAM rules through the dashboard session (spec 5 "Access rules", rule 6), the same services as
 * the master API (src/iam/rules.ts):
 *   /api/keys/{id}/iam[/{ruleId}]      keys the session may see (developers: keys they created)
 *   /api/members/{member}/iam[/{ruleId}] owners and admins; admins cannot modify an owner's rules
 *   /api/teams/{id}/iam[/{ruleId}]     owners and admins
 * Reading member and team rules is open to owners and admins only as well.
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import type { DashboardEnv } from "./types";
import { getDb } from "../../db/client";
import { forbidden } from "../../errors/api-error";
import { validate } from "../../errors/validation";
import { getKeyRow } from "../../keys/lookup";
import { ruleBodySchema, rulePatchSchema } from "../../iam/rule-body";
import { createRule, deleteRule, listRules, publicRule, resolveMemberTarget, resolveTeamTarget, updateRule, type RuleTarget } from "../../iam/rules";
import { ownerFilter } from "./keys";
import { isOrgAdmin } from "./organization";

type Resolver = (c: Context<DashboardEnv>, ref: string, write: boolean) => Promise<RuleTarget>;

function requireAdmin(c: Context<DashboardEnv>): void {
  if (!isOrgAdmin(c.get("session"))) throw forbidden("Only owners and admins set member and team rules.", "role_required");
}

const targets: Array<{ path: string; resolve: Resolver }> = [
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
    resolve: async (c, ref, write) => {
      requireAdmin(c);
      const s = c.get("session");
      const target = await resolveMemberTarget(getDb(c.env.DB), s.organizationId, ref);
      if (write && target.role === "owner" && s.role !== "owner") throw forbidden("Admins cannot modify an owner's rules.", "role_required");
      return target;
    },
  },
  {
    path: "/teams/:ref/iam",
    resolve: async (c, ref) => {
      requireAdmin(c);
      return resolveTeamTarget(getDb(c.env.DB), c.get("session").organizationId, ref);
    },
  },
];

const refParam = z.object({ ref: z.string().min(1).max(320) });
const ruleParam = z.object({ ref: z.string().min(1).max(320), ruleId: z.string().min(1).max(64) });

export const dashboardIamRoutes = new Hono<DashboardEnv>();

for (const { path, resolve } of targets) {
  dashboardIamRoutes.post(path, validate("param", refParam), validate("json", ruleBodySchema), async (c) => {
    const target = await resolve(c, c.req.valid("param").ref, true);
    return c.json({ rule: publicRule(await createRule(c.env, target, c.req.valid("json"))) }, 201);
  });
  dashboardIamRoutes.get(path, validate("param", refParam), async (c) => {
    const target = await resolve(c, c.req.valid("param").ref, false);
    return c.json({ rules: (await listRules(c.env, target)).map(publicRule) });
  });
  dashboardIamRoutes.patch(`${path}/:ruleId`, validate("param", ruleParam), validate("json", rulePatchSchema), async (c) => {
    const { ref, ruleId } = c.req.valid("param");
    const target = await resolve(c, ref, true);
    return c.json({ rule: publicRule(await updateRule(c.env, target, ruleId, c.req.valid("json"))) });
  });
  dashboardIamRoutes.delete(`${path}/:ruleId`, validate("param", ruleParam), async (c) => {
    const { ref, ruleId } = c.req.valid("param");
    const target = await resolve(c, ref, true);
    await deleteRule(c.env, target, ruleId);
    return c.json({ message: `IAM rule '${ruleId}' deleted` });
  });
}
