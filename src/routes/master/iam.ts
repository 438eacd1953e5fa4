/**
 * IAM rule routes (contract section 4), built once and mounted twice:
 *  - master API (`/v1/master`): keys, members (id or e-mail) and teams, org-wide authority;
 *  - dashboard (`/api`, src/routes/dashboard/rules.ts): member and team rules for owners and
 *    admins, where an admin cannot change an owner's member rules (spec section 5, rule 6).
 *
 *   POST/GET /<target>/{ref}/iam     PATCH/DELETE /<target>/{ref}/iam/{ruleId}
 */
import { Hono, type Context, type Env as HonoEnv } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import type { Env } from "../../env";
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

export interface RuleTargetRoute<E extends HonoEnv> {
  path: string;
  resolve: (c: Context<E>, ref: string) => Promise<RuleTarget & { role?: string }>;
  /** Throws (403) when the caller may read but not change this target's rules. */
  assertWritable?: (c: Context<E>, target: RuleTarget & { role?: string }) => void;
}

const refParam = z.object({ ref: z.string().min(1).max(320) });
const ruleParam = z.object({ ref: z.string().min(1).max(320), ruleId: z.string().min(1).max(64) });

export function buildRuleRoutes<E extends HonoEnv & { Bindings: Env }>(targets: ReadonlyArray<RuleTargetRoute<E>>): Hono<E> {
  const routes = new Hono<E>();
  // Hono narrows the handler's context type through the validators; the route's own E is the same.
  const base = (c: unknown): Context<E> => c as Context<E>;
  for (const { path, resolve: resolveIn, assertWritable } of targets) {
    const resolve = (c: unknown, ref: string) => resolveIn(base(c), ref);
    const writable = async (c: unknown, ref: string) => {
      const target = await resolve(c, ref);
      assertWritable?.(base(c), target);
      return target;
    };

    routes.post(path, validate("param", refParam), validateBody(ruleBodySchema), async (c) => {
      const target = await writable(c, c.req.valid("param").ref);
      const rule = await createRule(base(c).env, target, c.req.valid("json"));
      return c.json({ rule: publicRule(rule) }, 201);
    });

    routes.get(path, validate("param", refParam), async (c) => {
      const target = await resolve(c, c.req.valid("param").ref);
      const rules = await listRules(base(c).env, target);
      return c.json({ rules: rules.map(publicRule) });
    });

    routes.patch(`${path}/:ruleId`, validate("param", ruleParam), validateBody(rulePatchSchema), async (c) => {
      const { ref, ruleId } = c.req.valid("param");
      const target = await writable(c, ref);
      const rule = await updateRule(base(c).env, target, ruleId, c.req.valid("json"));
      return c.json({ rule: publicRule(rule) });
    });

    routes.delete(`${path}/:ruleId`, validate("param", ruleParam), async (c) => {
      const { ref, ruleId } = c.req.valid("param");
      const target = await writable(c, ref);
      await deleteRule(base(c).env, target, ruleId);
      return c.json({ message: `IAM rule '${ruleId}' deleted` });
    });
  }
  return routes;
}

const orgOf = (c: Context<AppEnv>) => c.get("master").organizationId;

export const masterIamRoutes = buildRuleRoutes<AppEnv>([
  { path: "/keys/:ref/iam", resolve: (c, ref) => resolveKeyTarget(getDb(c.env.DB), orgOf(c), ref) },
  { path: "/members/:ref/iam", resolve: (c, ref) => resolveMemberTarget(getDb(c.env.DB), orgOf(c), ref) },
  { path: "/teams/:ref/iam", resolve: (c, ref) => resolveTeamTarget(getDb(c.env.DB), orgOf(c), ref) },
]);
