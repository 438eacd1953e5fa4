/**
 * Rate limits (docs/admission.md#rate-limits): requests per minute and tokens per minute, per
 * organization (default: its plan's) and per key (none of its own unless set). The tightest limit
 * that applies decides; the window is the UTC minute.
 */
import * as z from "zod";
import type { Plan } from "../db/schema";

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

const perMinute = z.number().int().min(1).max(1_000_000_000);

/** Create / PATCH fields of a key (null clears: only the organization's limits apply). */
export const keyRateFields = {
  requestsPerMinute: perMinute.nullable().optional(),
  tokensPerMinute: perMinute.nullable().optional(),
};

/** The organization PATCH body's `rateLimits` (null returns to the plan's default). */
export const organizationRateFields = z
  .object({ requestsPerMinute: perMinute.nullable().optional(), tokensPerMinute: perMinute.nullable().optional() })
  .refine((b) => b.requestsPerMinute !== undefined || b.tokensPerMinute !== undefined, { message: "send requestsPerMinute or tokensPerMinute" });

/** The organization's limits in force: its own, else its plan's. */
export function organizationRateLimits(plan: Plan, own: RateLimits): { requestsPerMinute: number; tokensPerMinute: number } {
  const d = PLAN_RATE_LIMITS[plan];
  return { requestsPerMinute: own.requestsPerMinute ?? d.requestsPerMinute, tokensPerMinute: own.tokensPerMinute ?? d.tokensPerMinute };
}

/** How an organization's rate limits are shown: in force, and the plan's defaults. */
export function publicRateLimits(plan: Plan, own: RateLimits) {
  return { ...organizationRateLimits(plan, own), planDefaults: PLAN_RATE_LIMITS[plan] };
}
