import type { Env } from "../env";
import { formatUsd } from "../billing/money";
import { addPeriod } from "../billing/period";
import { keyStateStub } from "../durable-objects/key-state";
import { settleQueuedFor } from "../billing/settle";
import { publicKey, type KeyRow } from "./create";
import { currentWindow, type SettledSpend } from "./spend";
import { limitStateOf } from "./limit-state";
import { memberLimitStateLive, withOwner } from "../members/limit-view";

/** Spend as decimal strings, and the current window's start and end. */
function spendFields(row: KeyRow, spend: SettledSpend) {
  const windowEnd =
    spend.periodStartedAt !== null && row.periodUsageDurationValue && row.periodUsageDurationUnit
      ? addPeriod(spend.periodStartedAt, row.periodUsageDurationValue, row.periodUsageDurationUnit)
      : null;
  const periodEndsAt = windowEnd === null ? null : new Date(windowEnd).toISOString();
  return {
    usage: formatUsd(spend.usage),
    periodUsage: formatUsd(spend.periodUsage),
    periodStartedAt: spend.periodStartedAt === null ? null : new Date(spend.periodStartedAt).toISOString(),
    periodEndsAt,
    limitState: limitStateOf(row, spend, periodEndsAt),
  };
}

/**
 * One key: `publicKey` plus live spend from the key's DO (decimal strings) and the current window,
 * after sending what this isolate has queued for the key.
 */
export async function keyDetail(env: Env, row: KeyRow) {
  await settleQueuedFor(env, row.id);
  const [spend, owner] = await Promise.all([keyStateStub(env, row.id).getSpend(), memberLimitStateLive(env, row.createdBy)]);
  return withOwner({ ...publicKey(row), ...spendFields(row, spend) }, owner);
}

/** Spend fields of a key whose figures have not reached D1 yet (src/keys/spend.ts). */
const UNKNOWN_SPEND = { usage: null, periodUsage: null, periodStartedAt: null, periodEndsAt: null, limitState: null } as const;

/**
 * A key in a list: the fields of `keyDetail`, with the settled spend D1 holds (no object call),
 * or null figures when D1 has none for the key yet.
 */
export function keyListItem(row: KeyRow, spend: SettledSpend | null, now: number) {
  return { ...publicKey(row), ...(spend ? spendFields(row, currentWindow(row, spend, now)) : UNKNOWN_SPEND) };
}

export type KeyListItem = ReturnType<typeof keyListItem>;
