/** Master API: the organization itself (compliance policy, budget notifications). */
import { Hono } from "hono";
import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { organizations } from "../../db/schema";
import { PROVIDER_IDS } from "../../catalog/types";
import { notFound } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { bumpKeyVersions } from "../../keys/sync";
import { publicOrganization } from "../../organizations/view";
import type { Env } from "../../env";

const patchBody = z.object({
  compliance: z
    .object({
      noTraining: z.boolean().optional(),
      deniedProviders: z.array(z.enum(PROVIDER_IDS)).max(PROVIDER_IDS.length).optional(),
    })
    .optional(),
  notifications: z
    .object({
      apiKeyBudgets: z.boolean().optional(),
      thresholdPercent: z.number().int().min(50).max(100).optional(),
    })
    .optional(),
});

/** The organization with its credit balance read as text (exact beyond 2^53 pico-dollars). */
async function loadOrganization(env: Env, id: string) {
  const row = await getDb(env.DB)
    .select({
      id: organizations.id,
      name: organizations.name,
      plan: organizations.plan,
      creditsPico: sql<string>`CAST(${organizations.creditsPico} AS TEXT)`,
      compliance: organizations.compliance,
      notifications: organizations.notifications,
      createdAt: organizations.createdAt,
    })
    .from(organizations)
    .where(eq(organizations.id, id))
    .get();
  if (!row) throw notFound("Organization not found.");
  return row;
}

export const organizationRoutes = new Hono<AppEnv>();

organizationRoutes.get("/", async (c) => {
  return c.json({ organization: publicOrganization(await loadOrganization(c.env, c.get("master").organizationId)) });
});

organizationRoutes.patch("/", validateBody(patchBody), async (c) => {
  const orgId = c.get("master").organizationId;
  const body = c.req.valid("json");
  const current = await loadOrganization(c.env, orgId);
  const compliance = { ...current.compliance, ...body.compliance };
  if (compliance.deniedProviders) compliance.deniedProviders = [...new Set(compliance.deniedProviders)];
  const notifications = { ...current.notifications, ...body.notifications };
  await getDb(c.env.DB).update(organizations).set({ compliance, notifications }).where(eq(organizations.id, orgId));
  // Policy is part of every key's context.
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ organization: publicOrganization({ ...current, compliance, notifications }) });
});
