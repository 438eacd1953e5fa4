/**
 * After a request: settle the key's reservation with the real cost in its KeyState DO and debit
 * the credit-paid part from the organization's balance. Runs in waitUntil, off the hot path.
 * Budget alerts (src/billing/budget-alerts.ts) run after settlement; their failures are logged and
 * never affect it.
 */
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import type { KeyContext } from "../auth/key-context";
import { getDb } from "../db/client";
import { organizations } from "../db/schema";
import { keyStateStub } from "../durable-objects/key-state";
import type { Pico } from "./money";
import { processBudgetAlerts } from "./budget-alerts";

export interface RequestCost {
  /** Everything the key spent (credits + BYOK): counts against the key's limits. */
  totalPico: Pico;
  /** The part paid with gateway credits: debited from the organization. */
  creditsPico: Pico;
}

export async function settleRequest(env: Env, auth: KeyContext, reservationId: string | null, cost: RequestCost): Promise<void> {
  const settle = keyStateStub(env, auth.key.id).settle(reservationId, cost.totalPico);
  const debit =
    cost.creditsPico > 0n
      ? getDb(env.DB)
          .update(organizations)
          .set({ creditsPico: sql`${organizations.creditsPico} - ${cost.creditsPico.toString()}` })
          .where(eq(organizations.id, auth.organization.id))
      : Promise.resolve();
  const [result] = await Promise.all([settle, debit]);
  if (result.crossed.length === 0) return;
  try {
    await processBudgetAlerts(env, auth, result.crossed);
  } catch (err) {
    console.error("budget alerts failed", err instanceof Error ? err.message : String(err));
  }
}
