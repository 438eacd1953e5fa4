/**
 * Settled spend of keys as D1 holds it (`key_spend`, reported by each key's KeyState object with
 * its outbox flush): what key lists show, without one object call per key. It lags the object by
 * the log flush (LOG_FLUSH_MS; the record is in the key's object before the answer ends); docs/admission.md.
 */
import type { Env } from "../env";
import type { keySpend } from "../db/schema";
import type { Pico } from "../billing/money";
import { addPeriod } from "../billing/period";
import { keyStateStub, snapshotOf } from "../durable-objects/key-state";
import type { KeyRow } from "./create";

export interface SettledSpend {
  usage: Pico;
  periodUsage: Pico;
  /** Start of the running recurring window (epoch ms), null when none runs. */
  periodStartedAt: number | null;
}

export const spendOfRow = (r: typeof keySpend.$inferSelect): SettledSpend => ({
  usage: BigInt(r.usagePico),
  periodUsage: BigInt(r.periodUsagePico),
  periodStartedAt: r.periodStartedAt,
});

/**
 * The window as the key's object would answer at `now` (KeyState.rollWindow and sync): a window
 * that has ended has nothing spent in it, and a key without a recurring limit has no window.
 */
export function currentWindow(row: KeyRow, s: SettledSpend, now: number): SettledSpend {
  const value = row.periodUsageDurationValue;
  const unit = row.periodUsageDurationUnit;
  const running =
    row.periodUsageLimit !== null && unit !== null && value !== null && value > 0 && s.periodStartedAt !== null && addPeriod(s.periodStartedAt, value, unit) > now;
  return running ? s : { usage: s.usage, periodUsage: 0n, periodStartedAt: null };
}

/**
 * At most this many object calls per list: keys without a `key_spend` row (created before it
 * existed, and without a spend change since) are read from their object, which writes the row, so
 * each such key costs one call once. Keys beyond the bound are listed without figures (null) and
 * read by the next lists.
 */
export const UNREPORTED_READS_PER_LIST = 20;

/** Reads (and has D1 record) the spend of up to UNREPORTED_READS_PER_LIST keys without a row. */
export async function readUnreported(env: Env, rows: readonly KeyRow[]): Promise<Map<string, SettledSpend>> {
  const read = await Promise.all(
    rows.slice(0, UNREPORTED_READS_PER_LIST).map(async (row) => {
      try {
        const s = await keyStateStub(env, row.id).publishSpend(snapshotOf(row));
        return [row.id, { usage: s.usage, periodUsage: s.periodUsage, periodStartedAt: s.periodStartedAt }] as const;
      } catch (err) {
        console.error("key spend read failed", err instanceof Error ? err.message : String(err));
        return null;
      }
    }),
  );
  return new Map(read.filter((r) => r !== null));
}
