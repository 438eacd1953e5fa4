import type { Env } from "../env";
import { formatUsd } from "../billing/money";
import { addPeriod } from "../billing/period";
import { keyStateStub } from "../durable-objects/key-state";
import { settleQueuedFor } from "../billing/settle";
import { publicKey, type KeyRow } from "./create";

/** `publicKey` plus live spend from the key's DO (decimal strings) and the current window. */
export async function keyDetail(env: Env, row: KeyRow) {
  await settleQueuedFor(env, row.id);
  const spend = await keyStateStub(env, row.id).getSpend();
  const windowEnd =
    spend.periodStartedAt !== null && row.periodUsageDurationValue && row.periodUsageDurationUnit
      ? addPeriod(spend.periodStartedAt, row.periodUsageDurationValue, row.periodUsageDurationUnit)
      : null;
  return {
    ...publicKey(row),
    usage: formatUsd(spend.usage),
    periodUsage: formatUsd(spend.periodUsage),
    periodStartedAt: spend.periodStartedAt === null ? null : new Date(spend.periodStartedAt).toISOString(),
    periodEndsAt: windowEnd === null ? null : new Date(windowEnd).toISOString(),
  };
}
