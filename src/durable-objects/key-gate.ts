/**
 * The rules KeyState decides by, apart from its storage and calls: is the key live, does its
 * spend (with what requests in flight hold) allow one more request, where its recurring window
 * stands, and which alert thresholds a settlement moved. Pure functions over the key's snapshot
 * and spend, so the object's file keeps its state and protocol only (docs/admission.md).
 */
import type { PeriodUnit } from "../db/schema";
import { parseUsd, type Pico } from "../billing/money";
import { timingSafeEqual } from "../lib/crypto";
import { addPeriod } from "../billing/period";
import type { DenialReason, GateResult, KeySnapshot, SettleResult, SpendState } from "./key-state-types";

const DENIAL_MESSAGES: Record<Exclude<DenialReason, "usage_limit_reached" | "period_usage_limit_reached" | "budget_busy">, string> = {
  deleted: "This API key has been deleted.",
  disabled: "This API key is disabled.",
  expired: "This API key has expired.",
  rolled: "This API key secret was rolled; use the new secret.",
};

type PeriodSnapshot = KeySnapshot & { periodUsageLimit: string; periodUsageDurationValue: number; periodUsageDurationUnit: PeriodUnit };

export const hasPeriod = (s: KeySnapshot): s is PeriodSnapshot =>
  s.periodUsageLimit !== null && s.periodUsageDurationUnit !== null && s.periodUsageDurationValue !== null && s.periodUsageDurationValue > 0;

/** The refusal of a key that is not usable (deleted, rolled, expired, disabled), else null. */
export function liveness(s: KeySnapshot, fingerprint: string, now: number): GateResult | null {
  const deny = (reason: keyof typeof DENIAL_MESSAGES): GateResult => ({ ok: false, version: s.version, reason, message: DENIAL_MESSAGES[reason] });
  if (s.status === "deleted") return deny("deleted");
  if (!timingSafeEqual(fingerprint, s.fingerprint)) return deny("rolled");
  if (s.expiresAt !== null && s.expiresAt <= now) return deny("expired");
  if (s.status !== "active") return deny("disabled");
  return null;
}

/** The first use with no running window starts one, with nothing spent in it yet. */
export function startWindow(spend: SpendState, now: number): void {
  if (spend.periodStartedAt !== null) return;
  spend.periodStartedAt = now;
  spend.periodUsage = 0n;
}

/** A window ends after its duration; the next starts at the first use after that. */
export function rollWindow(s: KeySnapshot | null, spend: SpendState, now: number): void {
  if (!s?.periodUsageDurationUnit || !s.periodUsageDurationValue || spend.periodStartedAt === null) return;
  if (addPeriod(spend.periodStartedAt, s.periodUsageDurationValue, s.periodUsageDurationUnit) <= now) {
    spend.periodStartedAt = null;
    spend.periodUsage = 0n;
  }
}

/**
 * Settled spend at a limit: the refusal; spend plus what requests in flight hold (`held`:
 * reservations and leases) at a limit: "wait"; else "admit".
 */
export function spendVerdict(s: KeySnapshot, spend: SpendState, held: Pico, now: number): GateResult | "wait" | "admit" {
  let wait = false;
  if (s.usageLimit !== null) {
    const limit = parseUsd(s.usageLimit);
    if (spend.usage >= limit) {
      return { ok: false, version: s.version, reason: "usage_limit_reached", message: `Usage limit reached: this key has spent its all-time limit of $${s.usageLimit}.` };
    }
    wait ||= spend.usage + held >= limit;
  }
  if (hasPeriod(s)) {
    startWindow(spend, now);
    const limit = parseUsd(s.periodUsageLimit);
    if (spend.periodUsage >= limit) {
      const resetsAt = new Date(addPeriod(spend.periodStartedAt ?? now, s.periodUsageDurationValue, s.periodUsageDurationUnit)).toISOString();
      return {
        ok: false,
        version: s.version,
        reason: "period_usage_limit_reached",
        message: `Usage limit reached: this key has spent its recurring limit of $${s.periodUsageLimit} per ${s.periodUsageDurationValue} ${s.periodUsageDurationUnit}(s); the window resets at ${resetsAt}.`,
      };
    }
    wait ||= spend.periodUsage + held >= limit;
  }
  return wait ? "wait" : "admit";
}

/** A lease is granted only while the remaining budget is worth this many requests like this one. */
const LEASE_MIN_REQUESTS = 32n;
/** ... and it carves this fraction of the remaining budget. */
const LEASE_SLICE_DIVISOR = 8n;

/**
 * The slice a lease may carve: null (no limit), a fraction of what is left of the tightest
 * limit after what requests in flight hold (`held`), or "none" near the limit (per-request admission).
 */
export function leaseSlice(s: KeySnapshot, spend: SpendState, held: Pico, estimate: Pico): Pico | null | "none" {
  const left: Pico[] = [];
  if (s.usageLimit !== null) left.push(parseUsd(s.usageLimit) - spend.usage - held);
  if (hasPeriod(s)) left.push(parseUsd(s.periodUsageLimit) - spend.periodUsage - held);
  if (left.length === 0) return null;
  const remaining = left.reduce((a, b) => (b < a ? b : a));
  const unit = estimate > 0n ? estimate : 1n;
  return remaining >= LEASE_MIN_REQUESTS * unit ? remaining / LEASE_SLICE_DIVISOR : "none";
}

/** The 429 of a request that waited its bound while requests in flight held the budget. */
export function busy(version: number, waitMs: number): GateResult {
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    ok: false,
    version,
    reason: "budget_busy",
    retryAfterSeconds,
    message: `Requests in flight hold the rest of this key's spend limit; retry in ${retryAfterSeconds} s.`,
  };
}

/** Limits whose spend percentage moved in a settlement; the alert module applies the threshold. */
export function crossedThresholds(s: KeySnapshot | null, before: { usage: Pico; periodUsage: Pico }, spend: SpendState): SettleResult["crossed"] {
  if (!s) return [];
  const pct = (v: Pico, limit: Pico) => (limit > 0n ? Number((v * 10000n) / limit) / 100 : 0);
  const out: SettleResult["crossed"] = [];
  if (s.usageLimit) {
    const limit = parseUsd(s.usageLimit);
    out.push({ limit: "all_time", windowStart: 0, percentBefore: pct(before.usage, limit), percent: pct(spend.usage, limit) });
  }
  if (s.periodUsageLimit && spend.periodStartedAt !== null) {
    const limit = parseUsd(s.periodUsageLimit);
    out.push({ limit: "period", windowStart: spend.periodStartedAt, percentBefore: pct(before.periodUsage, limit), percent: pct(spend.periodUsage, limit) });
  }
  return out.filter((c) => c.percent !== c.percentBefore);
}
