/** Master API: the organization itself (compliance policy, budget notifications). */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { validateBody } from "../../errors/validation";
import { publicOrganization } from "../../organizations/view";
import { loadOrganization, organizationPatchBody, updateOrganization } from "../../actions/organization";

export const organizationRoutes = new Hono<AppEnv>();

organizationRoutes.get("/", async (c) => {
  return c.json({ organization: publicOrganization(await loadOrganization(c.env, c.get("master").organizationId)) });
});

organizationRoutes.patch("/", validateBody(organizationPatchBody), async (c) => {
  return c.json({ organization: await updateOrganization(c.env, c.get("master").organizationId, c.req.valid("json")) });
});
