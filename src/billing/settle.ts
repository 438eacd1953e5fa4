/**
 * After a request: settle the key's reservation with the real cost in its KeyState DO and debit
 * the credit-paid part from the organization's balance. Runs in waitUntil, off the hot path.
 * (Budget alerts hook in here: issue 5.)
 */
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import type { KeyContext } from "../auth/key-context";
import { getDb } from "../db/client";
import { organizations } from "../db/schema";
import { keyStateStub } from "../durable-objects/key-state";
import type { Pico } from "./money";

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
  await Promise.all([settle, debit]);
}
