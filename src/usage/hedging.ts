/**
 * What hedging costs, for the hourly aggregates: a request counts as hedged when one of its
 * attempts was cancelled because the other answered first (`error_type: "hedge_cancelled"`, see
 * src/routes/chat/hedge.ts), and its hedge cost is what those cancelled attempts cost
 * (`hedge_cost`, USD). The log consumer sums the same two figures in SQL (`hedgeSql`), the rebuild
 * from R2 in code (`hedgeOf`): both must agree, so both live here.
 */
import type { RoutingAttempt } from "../db/schema";

export const HEDGE_CANCELLED = "hedge_cancelled";

/** USD as pico-dollars, rounded the way SQLite's `ROUND(x * 1e12)` does for the same number. */
const picoOf = (usd: number): bigint => BigInt(Math.round(usd * 1e12));

/** Whether a request's attempts include a cancelled hedge, and what the cancelled attempts cost. */
export function hedgeOf(routing: readonly RoutingAttempt[] | null | undefined): { hedged: number; costPico: bigint } {
  let hedged = 0;
  let usd = 0;
  for (const a of routing ?? []) {
    if (a.error_type !== HEDGE_CANCELLED) continue;
    hedged = 1;
    usd += typeof a.hedge_cost === "number" && Number.isFinite(a.hedge_cost) ? a.hedge_cost : 0;
  }
  return { hedged, costPico: picoOf(usd) };
}

/**
 * SQL over one record's routing attempts (`routing`: an expression giving its JSON text, which
 * must not be a bare `value`: inside these subqueries that names their own json_each's column): the
 * record's hedged flag (0 or 1) and its hedge cost in pico-dollars, as `hedgeOf` computes them.
 */
export function hedgeSql(routing: string): { hedged: string; costPico: string } {
  const cancelled = `FROM json_each(COALESCE(${routing}, '[]')) AS hx WHERE json_extract(hx.value, '$.error_type') = '${HEDGE_CANCELLED}'`;
  return {
    hedged: `(SELECT COUNT(*) > 0 ${cancelled})`,
    costPico: `(SELECT CAST(ROUND(COALESCE(SUM(json_extract(hx.value, '$.hedge_cost')), 0) * 1e12) AS INTEGER) ${cancelled})`,
  };
}
