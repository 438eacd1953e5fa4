/**
 * After a request: settle the key's reservation with the real cost in its KeyState DO and debit
 * the credit-paid part from the organization's balance. Runs in waitUntil, off the hot path.
 * Budget alerts (src/billing/budget-alerts.ts) run after settlement; their failures are logged and
 * never affect it.
 */
import type { Env } from "../env";
import type { KeyContext } from "../auth/key-context";
import { keyStateStub, type SettleResult } from "../durable-objects/key-state";
import { requestLogJson, type RequestLogInput } from "../usage/request-log";
import type { Pico } from "./money";
import { processBudgetAlerts } from "./budget-alerts";

export interface RequestCost {
  /** Everything the key spent (credits + BYOK): counts against the key's limits. */
  totalPico: Pico;
  /** The part paid with gateway credits: debited from the organization. */
  creditsPico: Pico;
}

/**
 * Settles in the key's DO. With `log` (the chat path), the log row and the credit debit go into
 * the DO's outbox in the same storage write as the spend and reach D1 in batches (see KeyState).
 * Without it, the credit debit is written to D1 here, together with `statements` in one batch.
 */
export async function settleRequest(
  env: Env,
  auth: KeyContext,
  reservationId: string | null,
  cost: RequestCost,
  log?: RequestLogInput,
): Promise<void> {
  const stub = keyStateStub(env, auth.key.id);
  let result: SettleResult;
  if (log) {
    result = await stub.settle(reservationId, cost.totalPico, undefined, {
      row: requestLogJson(log),
      logId: log.logId,
      organizationId: auth.organization.id,
      creditsPico: cost.creditsPico,
    });
  } else {
    const debit = cost.creditsPico > 0n ? debitStatement(env, auth.organization.id, cost.creditsPico).run() : Promise.resolve();
    [result] = await Promise.all([stub.settle(reservationId, cost.totalPico), debit]);
  }
  if (result.crossed.length === 0) return;
  try {
    await processBudgetAlerts(env, auth, result.crossed);
  } catch (err) {
    console.error("budget alerts failed", err instanceof Error ? err.message : String(err));
  }
}

const DEBIT_SQL = "UPDATE organizations SET credits_pico = credits_pico - CAST(? AS INTEGER) WHERE id = ?";

/** Exact integer arithmetic in SQLite; the amount is bound as text and cast, so no float is involved. */
const debitStatement = (env: Env, orgId: string, amount: Pico): D1PreparedStatement =>
  env.DB.prepare(DEBIT_SQL).bind(amount.toString(), orgId);
