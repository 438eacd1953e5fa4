/**
 * Spend-limit fields of a gateway key (spec 2.1, 8), shared by the master and dashboard APIs:
 * decimal-string USD amounts, and a recurring window of 1 hour .. 12 months whose three fields
 * (`periodUsageLimit`, `periodUsageDurationValue`, `periodUsageDurationUnit`) go together.
 */
import * as z from "zod";
import { PERIOD_UNITS, type PeriodUnit } from "../db/schema";
import { isDecimalString, parseUsd } from "../billing/money";
import { isValidWindow } from "../billing/period";
import { badRequest } from "../errors/api-error";

/** USD amount as a decimal string ("12.5"); at most 12 decimals; non-negative; below $1e9. */
export const usdAmount = z
  .string()
  .trim()
  .refine((s) => isDecimalString(s) && !s.startsWith("-"), { message: "must be a non-negative decimal amount as a string, e.g. \"10.50\"" })
  .refine((s) => !/\.\d{13,}$/.test(s), { message: "at most 12 decimal places" })
  .refine((s) => !isDecimalString(s) || parseUsd(s) < 10n ** 21n, { message: "amount too large" })
  .transform((s) => normalizeAmount(s));

function normalizeAmount(s: string): string {
  const [whole = "0", frac] = s.split(".");
  const w = whole.replace(/^0+(?=\d)/, "");
  const f = (frac ?? "").replace(/0+$/, "");
  return f ? `${w}.${f}` : w;
}

export const limitFields = {
  usageLimit: usdAmount.nullable().optional(),
  periodUsageLimit: usdAmount.nullable().optional(),
  periodUsageDurationValue: z.number().int().min(1).max(8784).nullable().optional(),
  periodUsageDurationUnit: z.enum(PERIOD_UNITS).nullable().optional(),
};

export interface LimitState {
  usageLimit: string | null;
  periodUsageLimit: string | null;
  periodUsageDurationValue: number | null;
  periodUsageDurationUnit: PeriodUnit | null;
}

export type LimitPatch = { [K in keyof LimitState]?: LimitState[K] | undefined };

/** Applies a patch (undefined keeps, null clears) and checks that the window is consistent. */
export function mergeLimits(current: LimitState, patch: LimitPatch): LimitState {
  const pick = <K extends keyof LimitState>(k: K): LimitState[K] => (patch[k] === undefined ? current[k] : (patch[k] as LimitState[K]));
  const next: LimitState = {
    usageLimit: pick("usageLimit"),
    periodUsageLimit: pick("periodUsageLimit"),
    periodUsageDurationValue: pick("periodUsageDurationValue"),
    periodUsageDurationUnit: pick("periodUsageDurationUnit"),
  };
  assertWindow(next);
  return next;
}

export function assertWindow(l: LimitState): void {
  const set = [l.periodUsageLimit, l.periodUsageDurationValue, l.periodUsageDurationUnit].filter((v) => v !== null).length;
  if (set !== 0 && set !== 3) {
    const missing = l.periodUsageLimit === null ? "periodUsageLimit" : l.periodUsageDurationValue === null ? "periodUsageDurationValue" : "periodUsageDurationUnit";
    throw badRequest(
      "periodUsageLimit, periodUsageDurationValue and periodUsageDurationUnit must be set together (or all cleared with null).",
      missing,
    );
  }
  if (l.periodUsageDurationValue !== null && l.periodUsageDurationUnit !== null && !isValidWindow(l.periodUsageDurationValue, l.periodUsageDurationUnit)) {
    throw badRequest("The recurring window must be between 1 hour and 12 months.", "periodUsageDurationValue");
  }
}
