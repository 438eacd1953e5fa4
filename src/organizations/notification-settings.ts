/**
 * The one place that says what an organization's budget-alert settings are when they were never
 * saved (contract section 7): alerts on (`apiKeyBudgets` unset means on) at 80%, and the low-credit
 * alert at DEFAULT_LOW_CREDITS_THRESHOLD (src/billing/low-credits.ts). The gateway
 * (src/billing/budget-alerts.ts), the APIs (publicOrganization) and the dashboard all read them
 * through here, so what the dashboard shows is what the gateway does.
 */
import type { NotificationSettings } from "../db/schema";
import { effectiveLowCreditsThreshold } from "../billing/low-credits";

export const DEFAULT_THRESHOLD_PERCENT = 80;
export const MIN_THRESHOLD_PERCENT = 50;

export interface EffectiveNotificationSettings {
  apiKeyBudgets: boolean;
  thresholdPercent: number;
  /** The low-credit alert's threshold in effect (decimal USD; the default unless set), null when turned off. */
  lowCreditsThreshold: string | null;
}

/** A stored threshold clamped to 50..100; the default when unset. */
export const thresholdOf = (configured: number | undefined | null): number =>
  configured === undefined || configured === null || !Number.isFinite(configured)
    ? DEFAULT_THRESHOLD_PERCENT
    : Math.min(100, Math.max(MIN_THRESHOLD_PERCENT, configured));

export function effectiveNotifications(stored: NotificationSettings | null | undefined): EffectiveNotificationSettings {
  return {
    apiKeyBudgets: stored?.apiKeyBudgets !== false,
    thresholdPercent: thresholdOf(stored?.thresholdPercent),
    lowCreditsThreshold: effectiveLowCreditsThreshold(stored?.lowCreditsThreshold),
  };
}
