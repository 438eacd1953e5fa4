/** Master API: the organization itself (compliance policy, budget notifications). */
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { validateBody } from "../../errors/validation";
import { publicOrganization } from "../../organizations/view";
import { loadOrganization, organizationPatchBody, updateOrganization } from "../../actions/organization";
import { otlpExportView } from "../../integrations/otlp";

export const organizationRoutes = new Hono<AppEnv>();

organizationRoutes.get("/", async (c) => {
  const orgId = c.get("master").organizationId;
  const [row, observability] = await Promise.all([loadOrganization(c.env, orgId), otlpExportView(c.env, orgId)]);
  return c.json({ organization: { ...publicOrganization(row), observability } });
});

organizationRoutes.patch("/", validateBody(organizationPatchBody), async (c) => {
  return c.json({ organization: await updateOrganization(c.env, c.get("master").organizationId, c.req.valid("json")) });
});
