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
import { LOW_CREDITS_OFF } from "../billing/low-credits";
import { PROVIDER_IDS } from "../catalog/types";
import { notFound } from "../errors/api-error";
import { bumpKeyVersions } from "../keys/sync";
import { publicOrganization } from "../organizations/view";
import { assertWithinCeilings, organizationRateFields, perMinute } from "../rate-limits/plans";
import { otlpExportView, setOtlpExport } from "../integrations/otlp";
import { isRegionEntry } from "../routing/regions";

// Nested objects are strict too: a misspelt residency or alert setting must be a 400 naming it,
// not a 200 that changed nothing.
export const organizationPatchBody = z.strictObject({
  compliance: z
    .strictObject({
      noTraining: z.boolean().optional(),
      deniedProviders: z.array(z.enum(PROVIDER_IDS)).max(PROVIDER_IDS.length).optional(),
      /** No upstream call before the key's current rules are confirmed (docs/admission.md). */
      strictPolicy: z.boolean().optional(),
      /** Mask e-mail addresses, phone and card numbers in stored request bodies (src/usage/redact.ts). */
      redactBodies: z.boolean().optional(),
      /** Residency for every key: regions (`eu-central-1`) or continent codes (`EU`); `[]` lifts it. */
      regions: z
        .array(z.string().trim().refine(isRegionEntry, "must be a region (lower case, e.g. 'eu-central-1') or a continent code (NA, SA, EU, AF, AS, OC)"))
        .max(100)
        .optional(),
    })
    .optional(),
  notifications: z
    .strictObject({
      apiKeyBudgets: z.boolean().optional(),
      thresholdPercent: z.number().int().min(50).max(100).optional(),
      /** Decimal USD; alert owners (and `credits.low` webhooks) when the credit balance falls below it. `null` or 0 turns the alert off; unset: DEFAULT_LOW_CREDITS_THRESHOLD. */
      lowCreditsThreshold: z
        .string()
        .refine((v) => isDecimalString(v) && !v.startsWith("-"), 'must be a non-negative decimal string, e.g. "5.00"')
        .nullable()
        .optional(),
    })
    .optional(),
  /** Requests / tokens per minute of the whole organization; null returns to the plan's default. */
  rateLimits: organizationRateFields.optional(),
  /** OpenTelemetry export (src/integrations/otlp.ts); null turns it off. Header values are never shown again. */
  observability: z
    .object({
      otlpEndpoint: z.string().min(1).max(2000),
      otlpHeaders: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, "header names are letters, digits and '-'"), z.string().max(4000)).optional(),
    })
    .strict()
    .nullable()
    .optional(),
}).refine((b) => b.compliance !== undefined || b.notifications !== undefined || b.rateLimits !== undefined || b.observability !== undefined, {
  message: "nothing to update: send compliance, notifications, rateLimits or observability",
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
      maxRequestsPerMinute: organizations.maxRequestsPerMinute,
      maxTokensPerMinute: organizations.maxTokensPerMinute,
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
  if (body.observability !== undefined) await setOtlpExport(env, orgId, body.observability);
  const compliance = { ...current.compliance, ...body.compliance };
  if (compliance.deniedProviders) compliance.deniedProviders = [...new Set(compliance.deniedProviders)];
  if (compliance.regions) compliance.regions = [...new Set(compliance.regions)];
  const { lowCreditsThreshold, ...notificationPatch } = body.notifications ?? {};
  const notifications: NotificationSettings = { ...current.notifications, ...notificationPatch };
  // null turns the alert off; unset (never saved) means the default threshold.
  if (lowCreditsThreshold === null) notifications.lowCreditsThreshold = LOW_CREDITS_OFF;
  else if (lowCreditsThreshold !== undefined) notifications.lowCreditsThreshold = lowCreditsThreshold;
  const rate = {
    requestsPerMinute: body.rateLimits?.requestsPerMinute === undefined ? current.requestsPerMinute : body.rateLimits.requestsPerMinute,
    tokensPerMinute: body.rateLimits?.tokensPerMinute === undefined ? current.tokensPerMinute : body.rateLimits.tokensPerMinute,
  };
  // Plan values (or what the operator granted) are ceilings: the organization lowers, never raises.
  if (body.rateLimits) {
    const asked = { requestsPerMinute: body.rateLimits.requestsPerMinute ?? null, tokensPerMinute: body.rateLimits.tokensPerMinute ?? null };
    assertWithinCeilings(current.plan, asked, { requestsPerMinute: current.maxRequestsPerMinute, tokensPerMinute: current.maxTokensPerMinute });
  }
  const view = publicOrganization({ ...current, compliance, notifications, ...rate });
  if (body.compliance === undefined && body.notifications === undefined && body.rateLimits === undefined) return { ...view, observability: await otlpExportView(env, orgId) };
  await getDb(env.DB).update(organizations).set({ compliance, notifications, ...rate }).where(eq(organizations.id, orgId));
  // Policy and rate limits are part of every key's context.
  await bumpKeyVersions(env, { organizationId: orgId });
  return { ...view, observability: await otlpExportView(env, orgId) };
}

/** The operator's `PATCH /v1/admin/organizations/{id}/rate-limits` body: the ceilings (null: the plan's). */
export const rateCeilingsBody = z
  .object({ requestsPerMinute: perMinute.nullable().optional(), tokensPerMinute: perMinute.nullable().optional() })
  .refine((b) => b.requestsPerMinute !== undefined || b.tokensPerMinute !== undefined, { message: "send requestsPerMinute or tokensPerMinute" });

/**
 * The operator raises (or lowers) the most an organization may set for its own rate limits. With
 * no limits of its own the organization gets the new ceiling; its own limits stay, capped by it.
 */
export async function setRateCeilings(env: Env, orgId: string, body: z.infer<typeof rateCeilingsBody>) {
  const current = await loadOrganization(env, orgId);
  const max = {
    maxRequestsPerMinute: body.requestsPerMinute === undefined ? current.maxRequestsPerMinute : body.requestsPerMinute,
    maxTokensPerMinute: body.tokensPerMinute === undefined ? current.maxTokensPerMinute : body.tokensPerMinute,
  };
  await getDb(env.DB).update(organizations).set(max).where(eq(organizations.id, orgId));
  await bumpKeyVersions(env, { organizationId: orgId });
  return publicOrganization({ ...current, ...max });
}
