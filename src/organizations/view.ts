/**
 * Public JSON views of organization-level rows. Money leaves as decimal USD strings; password
 * hashes, fingerprints and ciphertexts never leave.
 */
import { formatUsd, picoFromDb } from "../billing/money";
import type { organizations, projects } from "../db/schema";
import { effectiveNotifications } from "./notification-settings";
import { publicRateLimits } from "../rate-limits/plans";

type OrganizationRow = typeof organizations.$inferSelect;
type ProjectRow = typeof projects.$inferSelect;

/** `credits` may be passed as text (read with CAST AS TEXT) to stay exact above 2^53 pico-dollars. */
export function publicOrganization(row: Omit<OrganizationRow, "creditsPico"> & { creditsPico: number | string | bigint }) {
  return {
    id: row.id,
    object: "organization" as const,
    name: row.name,
    plan: row.plan,
    credits: formatUsd(picoFromDb(row.creditsPico)),
    compliance: row.compliance,
    notifications: effectiveNotifications(row.notifications),
    /** In force (its own, else its ceiling), the plan's defaults, and the ceiling (`max`). */
    rateLimits: publicRateLimits(
      row.plan,
      { requestsPerMinute: row.requestsPerMinute, tokensPerMinute: row.tokensPerMinute },
      { requestsPerMinute: row.maxRequestsPerMinute, tokensPerMinute: row.maxTokensPerMinute },
    ),
    createdAt: new Date(row.createdAt).toISOString(),
  };
}

export function publicProject(row: ProjectRow) {
  return {
    id: row.id,
    object: "project" as const,
    organizationId: row.organizationId,
    name: row.name,
    mode: row.mode,
    cachingEnabled: row.cachingEnabled,
    cacheDurationSeconds: row.cacheDurationSeconds,
    firstByteTimeoutMs: row.firstByteTimeoutMs,
    timeoutMs: row.timeoutMs,
    hedging: row.hedging,
    logBodies: row.logBodies,
    provider: row.providerPreferences ?? null,
    operatorKeyFallback: row.operatorKeyFallback,
    isDefault: row.isDefault,
    createdAt: new Date(row.createdAt).toISOString(),
  };
}
