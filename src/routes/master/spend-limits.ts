/** Master API: spending limits of members and teams (src/actions/member-limits.ts). */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { validateBody } from "../../errors/validation";
import { memberLimitsView, setMemberLimits, setTeamLimits, spendLimitsBody, teamLimitsView } from "../../actions/member-limits";

export const spendLimitRoutes = new Hono<AppEnv>();

spendLimitRoutes.get("/members/:member/limits", async (c) => c.json({ limits: await memberLimitsView(c.env, c.get("master").organizationId, c.req.param("member")) }));

spendLimitRoutes.patch("/members/:member/limits", validateBody(spendLimitsBody), async (c) => {
  return c.json({ limits: await setMemberLimits(c.env, c.get("master").organizationId, c.req.param("member"), c.req.valid("json")) });
});

spendLimitRoutes.get("/teams/:id/limits", async (c) => c.json({ limits: await teamLimitsView(c.env, c.get("master").organizationId, c.req.param("id")) }));

spendLimitRoutes.patch("/teams/:id/limits", validateBody(spendLimitsBody), async (c) => {
  return c.json({ limits: await setTeamLimits(c.env, c.get("master").organizationId, c.req.param("id"), c.req.valid("json")) });
});
