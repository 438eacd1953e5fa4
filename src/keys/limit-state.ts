/**
 * A key's limit state as the key APIs and the Keys page show it: for each spend limit, what was
 * spent against it, what is left, whether it is reached (settled spend at or above the limit: the
 * same rule that answers 401 `usage_limit_reached`, docs/admission.md) and, for the recurring
 * limit, when the running window resets. A key at its limit stays `status: "active"` (an admin
 * state); `limitState.reached` says that requests with it are refused until a limit is raised or
 * cleared, or the window resets.
 */
import { formatUsd, parseUsd, type Pico } from "../billing/money";
import type { LimitState } from "./limits";

export interface LimitFigures {
  /** Limit, spent and left (never below 0), decimal USD strings. */
  limit: string;
  spent: string;
  remaining: string;
  reached: boolean;
}

export interface KeyLimitState {
  /** A limit is reached: spending requests with the key answer 401 `usage_limit_reached`. */
  reached: boolean;
  /** The all-time limit, null without one. */
  allTime: LimitFigures | null;
  /** The recurring limit, null without one; `resetsAt`: end of the running window (null: none runs, nothing spent). */
  recurring: (LimitFigures & { resetsAt: string | null }) | null;
  /** The key owner's member / team spending limit, when one applies (src/members/limit-view.ts). */
  member?: KeyLimitState & { memberId: string };
}

function figures(limit: string, spent: Pico): LimitFigures {
  const max = parseUsd(limit);
  return { limit, spent: formatUsd(spent), remaining: formatUsd(spent >= max ? 0n : max - spent), reached: spent >= max };
}

/** `spend` as settled (already rolled to the current window: an ended window has nothing spent). */
export function limitStateOf(limits: LimitState, spend: { usage: Pico; periodUsage: Pico }, periodEndsAt: string | null): KeyLimitState {
  const allTime = limits.usageLimit === null ? null : figures(limits.usageLimit, spend.usage);
  const recurring = limits.periodUsageLimit === null ? null : { ...figures(limits.periodUsageLimit, spend.periodUsage), resetsAt: periodEndsAt };
  return { reached: Boolean(allTime?.reached || recurring?.reached), allTime, recurring };
}
