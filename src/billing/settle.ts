/**
 * After a request: settle the key's reservation with the real cost in its KeyState DO and debit
 * the credit-paid part from the organization's balance. Runs in waitUntil, off the hot path.
 * Budget alerts (src/billing/budget-alerts.ts) run after settlement; their failures are logged and
 * never affect it.
 */
import type { Env } from "../env";
import type { KeyContext } from "../auth/key-context";
import { keyStateStub } from "../durable-objects/key-state";
import type { Pico } from "./money";
import { processBudgetAlerts } from "./budget-alerts";

export interface RequestCost {
  /** Everything the key spent (credits + BYOK): counts against the key's limits. */
  totalPico: Pico;
  /** The part paid with gateway credits: debited from the organization. */
  creditsPico: Pico;
}

/**
 * Settles in the key's DO and, in ONE D1 batch (one round trip, one transaction), debits the
 * organization's credits and runs `statements` (e.g. the request's log row), so the log row and
 * the debit are written together or not at all.
 */
export async function settleRequest(
  env: Env,
  auth: KeyContext,
  reservationId: string | null,
  cost: RequestCost,
  statements: D1PreparedStatement[] = [],
): Promise<void> {
  const settle = keyStateStub(env, auth.key.id).settle(reservationId, cost.totalPico);
  const writes = cost.creditsPico > 0n ? [debitStatement(env, auth.organization.id, cost.creditsPico), ...statements] : statements;
  const d1 = writes.length === 0 ? Promise.resolve() : writes.length === 1 ? writes[0]!.run() : env.DB.batch(writes);
  const [result] = await Promise.all([settle, d1]);
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
