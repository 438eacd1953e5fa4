/**
 * Master API: IAM rules of keys, members (id or e-mail) and teams (contract section 4).
 *   POST/GET      /keys/{id}/iam             PATCH/DELETE /keys/{id}/iam/{ruleId}
 *   POST/GET      /members/{member}/iam      PATCH/DELETE /members/{member}/iam/{ruleId}
 *   POST/GET      /teams/{id}/iam            PATCH/DELETE /teams/{id}/iam/{ruleId}
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { validate, validateBody } from "../../errors/validation";
import { ruleBodySchema, rulePatchSchema } from "../../iam/rule-body";
import {
  createRule,
  deleteRule,
  listRules,
  publicRule,
  resolveKeyTarget,
  resolveMemberTarget,
  resolveTeamTarget,
  updateRule,
  type RuleTarget,
} from "../../iam/rules";

type Resolver = (c: Context<AppEnv>, ref: string) => Promise<RuleTarget>;

const targets: Array<{ path: string; resolve: Resolver }> = [
  { path: "/keys/:ref/iam", resolve: (c, ref) => resolveKeyTarget(getDb(c.env.DB), c.get("master").organizationId, ref) },
  { path: "/members/:ref/iam", resolve: (c, ref) => resolveMemberTarget(getDb(c.env.DB), c.get("master").organizationId, ref) },
  { path: "/teams/:ref/iam", resolve: (c, ref) => resolveTeamTarget(getDb(c.env.DB), c.get("master").organizationId, ref) },
];

const refParam = z.object({ ref: z.string().min(1).max(320) });
const ruleParam = z.object({ ref: z.string().min(1).max(320), ruleId: z.string().min(1).max(64) });

export const masterIamRoutes = new Hono<AppEnv>();

for (const { path, resolve } of targets) {
  masterIamRoutes.post(path, validate("param", refParam), validateBody(ruleBodySchema), async (c) => {
    const target = await resolve(c, c.req.valid("param").ref);
    const rule = await createRule(c.env, target, c.req.valid("json"));
    return c.json({ rule: publicRule(rule) }, 201);
  });

  masterIamRoutes.get(path, validate("param", refParam), async (c) => {
    const target = await resolve(c, c.req.valid("param").ref);
    const rules = await listRules(c.env, target);
    return c.json({ rules: rules.map(publicRule) });
  });

  masterIamRoutes.patch(`${path}/:ruleId`, validate("param", ruleParam), validateBody(rulePatchSchema), async (c) => {
    const { ref, ruleId } = c.req.valid("param");
    const target = await resolve(c, ref);
    const rule = await updateRule(c.env, target, ruleId, c.req.valid("json"));
    return c.json({ rule: publicRule(rule) });
  });

  masterIamRoutes.delete(`${path}/:ruleId`, validate("param", ruleParam), async (c) => {
    const { ref, ruleId } = c.req.valid("param");
    const target = await resolve(c, ref);
    await deleteRule(c.env, target, ruleId);
    return c.json({ message: `IAM rule '${ruleId}' deleted` });
  });
}
