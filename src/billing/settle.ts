/**
 * After a request: settle the key's reservation with the real cost in its KeyState DO, and the
 * credit reservation and credit-paid part in the organization's OrgCredits DO. Runs in
 * waitUntil, off the hot path. Every route that admitted (admitKey/admitCredits) calls one of
 * these exactly once, also for failures (cost 0) and client aborts.
 * Budget alerts (src/billing/budget-alerts.ts) run after settlement.
 */
import type { Env } from "../env";
import type { KeyContext } from "../auth/key-context";
import { keyStateStub, type SettleResult, type Settlement } from "../durable-objects/key-state";
import { orgCreditsStub, type CreditSettlement } from "../durable-objects/org-credits";
import { requestLogJson, type RequestLogInput } from "../usage/request-log";
import type { Pico } from "./money";
import { processBudgetAlerts } from "./budget-alerts";

export interface RequestCost {
  /** Everything the key spent (credits + BYOK): counts against the key's limits. */
  totalPico: Pico;
  /** The part paid with gateway credits: debited from the organization. */
  creditsPico: Pico;
}

/** Credit settlements are only sent when there is something to release or record. */
function settleCredits(env: Env, orgId: string, items: CreditSettlement[]): Promise<void> {
  const useful = items.filter((i) => i.reservationId !== null || i.credits > 0n);
  return useful.length ? orgCreditsStub(env, orgId).settleMany(orgId, useful) : Promise.resolve();
}

/**
 * Settles a request that has no log row to go with it (images, videos, moderation): the spend in
 * the key's DO, and the credit debit (written to D1 by the organization's OrgCredits object,
 * which also releases the credit reservation), side by side.
 */
export async function settleRequest(env: Env, auth: KeyContext, reservationId: string | null, cost: RequestCost, creditsReservationId: string | null = null): Promise<void> {
  const credits = settleCredits(env, auth.organization.id, [{ reservationId: creditsReservationId, credits: cost.creditsPico, logId: null }]);
  const [result] = await Promise.all([keyStateStub(env, auth.key.id).settle(reservationId, cost.totalPico), credits]);
  await alertOn(env, auth, result);
}

/** Settlements waiting to be sent, per key. */
const queued = new Map<string, Array<{ auth: KeyContext; settlement: Settlement; credits: CreditSettlement }>>();

/**
 * The chat path: the spend, the log row and the credit debit go into the key's DO outbox in one
 * storage write (see KeyState) and reach D1 in batches. Settlements are queued and sent together
 * with those of the requests that finished in the same event-loop turn of this isolate, in one
 * `settleMany` call (one round trip and one DO transaction for all of them).
 *
 * The returned promise (for the request's waitUntil) covers the send this request makes. A request
 * sends what is queued in its own context, so no request waits on another request's I/O, and
 * every settlement is sent by a request that is still alive to send it.
 */
export function queueSettlement(
  env: Env,
  auth: KeyContext,
  reservationId: string | null,
  cost: RequestCost,
  log: RequestLogInput,
  creditsReservationId: string | null = null,
): Promise<void> {
  const keyId = auth.key.id;
  let batch = queued.get(keyId);
  if (!batch) {
    batch = [];
    queued.set(keyId, batch);
  }
  batch.push({
    auth,
    settlement: {
      reservationId,
      actual: cost.totalPico,
      outbox: { row: requestLogJson(log), logId: log.logId, organizationId: auth.organization.id, creditsPico: cost.creditsPico },
    },
    // The key's outbox debits D1 with the log row; the organization's object tracks it until then.
    credits: { reservationId: creditsReservationId, credits: cost.creditsPico, logId: log.logId },
  });
  return sendQueued(env, keyId);
}

async function sendQueued(env: Env, keyId: string): Promise<void> {
  // One macrotask: the requests finishing in this turn queue theirs first.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const batch = queued.get(keyId);
  if (!batch) return; // an earlier request of this turn sent it
  queued.delete(keyId);
  const orgId = batch[0]!.auth.organization.id;
  const [results] = await Promise.all([
    keyStateStub(env, keyId).settleMany(batch.map((b) => b.settlement)),
    settleCredits(env, orgId, batch.map((b) => b.credits)),
  ]);
  for (let i = 0; i < batch.length; i++) await alertOn(env, batch[i]!.auth, results[i]);
}

/** Budget alerts after a settlement; their failures are logged and never affect it. */
async function alertOn(env: Env, auth: KeyContext, result: SettleResult | undefined): Promise<void> {
  if (!result || result.crossed.length === 0) return;
  try {
    await processBudgetAlerts(env, auth, result.crossed);
  } catch (err) {
    console.error("budget alerts failed", err instanceof Error ? err.message : String(err));
  }
}
