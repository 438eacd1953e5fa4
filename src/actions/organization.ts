/**
 * Reading and changing an organization's settings (compliance policy, budget notifications),
 * shared by `PATCH /v1/master/organization`, `PATCH /api/organization` and the dashboard.
 */
import { eq, sql } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { organizations, type NotificationSettings } from "../db/schema";
import { isDecimalString } from "../billing/money";
import { PROVIDER_IDS } from "../catalog/types";
import { notFound } from "../errors/api-error";
import { bumpKeyVersions } from "../keys/sync";
import { publicOrganization } from "../organizations/view";
import { organizationRateFields } from "../rate-limits/plans";
import { isRegionEntry } from "../routing/regions";

export const organizationPatchBody = z.object({
  compliance: z
    .object({
      noTraining: z.boolean().optional(),
      deniedProviders: z.array(z.enum(PROVIDER_IDS)).max(PROVIDER_IDS.length).optional(),
      /** Residency for every key: regions (`eu-central-1`) or continent codes (`EU`); `[]` lifts it. */
      regions: z
        .array(z.string().trim().refine(isRegionEntry, "must be a region (lower case, e.g. 'eu-central-1') or a continent code (NA, SA, EU, AF, AS, OC)"))
        .max(100)
        .optional(),
    })
    .optional(),
  notifications: z
    .object({
      apiKeyBudgets: z.boolean().optional(),
      thresholdPercent: z.number().int().min(50).max(100).optional(),
      /** Decimal USD; e-mail owners when the credit balance falls below it. `null` turns the alert off. */
      lowCreditsThreshold: z
        .string()
        .refine((v) => isDecimalString(v) && !v.startsWith("-"), 'must be a non-negative decimal string, e.g. "5.00"')
        .nullable()
        .optional(),
    })
    .optional(),
  /** Requests / tokens per minute of the whole organization; null returns to the plan's default. */
  rateLimits: organizationRateFields.optional(),
}).refine((b) => b.compliance !== undefined || b.notifications !== undefined || b.rateLimits !== undefined, {
  message: "nothing to update: send compliance, notifications or rateLimits",
});

export type OrganizationPatch = z.infer<typeof organizationPatchBody>;

/** The organization with its credit balance read as text (exact beyond 2^53 pico-dollars). */
export async function loadOrganization(env: Env, id: string) {
  const row = await getDb(env.DB)
    .select({
      id: organizations.id,
      name: organizations.name,
      plan: organizations.plan,
      creditsPico: sql<string>`CAST(${organizations.creditsPico} AS TEXT)`,
      compliance: organizations.compliance,
      notifications: organizations.notifications,
      requestsPerMinute: organizations.requestsPerMinute,
      tokensPerMinute: organizations.tokensPerMinute,
      createdAt: organizations.createdAt,
    })
    .from(organizations)
    .where(eq(organizations.id, id))
    .get();
  if (!row) throw notFound("Organization not found.");
  return row;
}

export async function updateOrganization(env: Env, orgId: string, body: OrganizationPatch) {
  const current = await loadOrganization(env, orgId);
  const compliance = { ...current.compliance, ...body.compliance };
  if (compliance.deniedProviders) compliance.deniedProviders = [...new Set(compliance.deniedProviders)];
  if (compliance.regions) compliance.regions = [...new Set(compliance.regions)];
  const { lowCreditsThreshold, ...notificationPatch } = body.notifications ?? {};
  const notifications: NotificationSettings = { ...current.notifications, ...notificationPatch };
  if (lowCreditsThreshold === null) delete notifications.lowCreditsThreshold;
  else if (lowCreditsThreshold !== undefined) notifications.lowCreditsThreshold = lowCreditsThreshold;
  const rate = {
    requestsPerMinute: body.rateLimits?.requestsPerMinute === undefined ? current.requestsPerMinute : body.rateLimits.requestsPerMinute,
    tokensPerMinute: body.rateLimits?.tokensPerMinute === undefined ? current.tokensPerMinute : body.rateLimits.tokensPerMinute,
  };
  await getDb(env.DB).update(organizations).set({ compliance, notifications, ...rate }).where(eq(organizations.id, orgId));
  // Policy and rate limits are part of every key's context.
  await bumpKeyVersions(env, { organizationId: orgId });
  return publicOrganization({ ...current, compliance, notifications, ...rate });
}
