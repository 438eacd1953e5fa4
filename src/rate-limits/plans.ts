/**
 * Rate limits (docs/admission.md#rate-limits): requests per minute and tokens per minute, per
 * organization (default: its plan's) and per key (none of its own unless set). The tightest limit
 * that applies decides; the window is the UTC minute.
 */
import * as z from "zod";
import type { Plan } from "../db/schema";
import { ApiError } from "../errors/api-error";

export interface RateLimits {
  /** Requests admitted per window; null: no request limit at this level. */
  requestsPerMinute: number | null;
  /** Settled tokens (prompt + completion) per window; null: no token limit at this level. */
  tokensPerMinute: number | null;
}

/** The organization's limits when it has not set its own. */
export const PLAN_RATE_LIMITS: Record<Plan, { requestsPerMinute: number; tokensPerMinute: number }> = {
  free: { requestsPerMinute: 60, tokensPerMinute: 200_000 },
  pro: { requestsPerMinute: 1_000, tokensPerMinute: 2_000_000 },
  enterprise: { requestsPerMinute: 10_000, tokensPerMinute: 20_000_000 },
};

export const RATE_WINDOW_MS = 60_000;

export const perMinute = z.number().int().min(1).max(1_000_000_000);

/** Create / PATCH fields of a key (null clears: only the organization's limits apply). */
export const keyRateFields = {
  requestsPerMinute: perMinute.nullable().optional(),
  tokensPerMinute: perMinute.nullable().optional(),
};

/** The organization PATCH body's `rateLimits` (null returns to the plan's default); at most the ceilings. */
export const organizationRateFields = z
  .object({ requestsPerMinute: perMinute.nullable().optional(), tokensPerMinute: perMinute.nullable().optional() })
  .refine((b) => b.requestsPerMinute !== undefined || b.tokensPerMinute !== undefined, { message: "send requestsPerMinute or tokensPerMinute" });

const NO_LIMITS: RateLimits = { requestsPerMinute: null, tokensPerMinute: null };

/**
 * The most an organization may set for itself: its plan's values, or what the operator granted it
 * (`PATCH /v1/admin/organizations/{id}/rate-limits`; null: the plan's). An organization's master
 * key, owners and admins only ever choose at or below these.
 */
export function organizationRateCeilings(plan: Plan, granted: RateLimits): { requestsPerMinute: number; tokensPerMinute: number } {
  const d = PLAN_RATE_LIMITS[plan];
  return { requestsPerMinute: granted.requestsPerMinute ?? d.requestsPerMinute, tokensPerMinute: granted.tokensPerMinute ?? d.tokensPerMinute };
}

/**
 * The organization's limits in force: its own, else its ceiling, never above the ceiling (a value
 * stored before ceilings were enforced, or left from a plan it has since left, is capped here).
 */
export function organizationRateLimits(plan: Plan, own: RateLimits, granted: RateLimits = NO_LIMITS): { requestsPerMinute: number; tokensPerMinute: number } {
  const max = organizationRateCeilings(plan, granted);
  return {
    requestsPerMinute: Math.min(own.requestsPerMinute ?? max.requestsPerMinute, max.requestsPerMinute),
    tokensPerMinute: Math.min(own.tokensPerMinute ?? max.tokensPerMinute, max.tokensPerMinute),
  };
}

/** An organization's own limits above its ceiling: the 400 its own PATCH gets (only the operator raises). */
export function assertWithinCeilings(plan: Plan, own: RateLimits, granted: RateLimits): void {
  const max = organizationRateCeilings(plan, granted);
  for (const [field, unit] of [["requestsPerMinute", "requests"], ["tokensPerMinute", "tokens"]] as const) {
    const value = own[field];
    if (value !== null && value > max[field]) {
      throw new ApiError(400, `rateLimits.${field} ${value} is above this organization's limit of ${max[field]} ${unit} per minute (${plan} plan); only the operator raises it.`, {
        type: "invalid_request_error",
        code: "rate_limit_above_plan",
        param: `rateLimits.${field}`,
      });
    }
  }
}

/** How an organization's rate limits are shown: in force, the plan's defaults, and the most it may set. */
export function publicRateLimits(plan: Plan, own: RateLimits, granted: RateLimits = NO_LIMITS) {
  return { ...organizationRateLimits(plan, own, granted), planDefaults: PLAN_RATE_LIMITS[plan], max: organizationRateCeilings(plan, granted) };
}
