/**
 * After a request: settle the key's reservation with the real cost in its KeyState DO, and the
 * credit reservation and credit-paid part in the organization's OrgCredits DO. Nothing before the
 * first byte waits for it; the answer's last byte waits for the request's record to be stored
 * (docs/admission.md), the rest runs in waitUntil. Every route that admitted
 * (admitKey/admitCredits) calls one of these exactly once, also for failures (cost 0) and client aborts.
 * Budget alerts (src/billing/budget-alerts.ts) run after settlement.
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { keyStateStub, snapshotOf, type SettleResult } from "../durable-objects/key-state";
import { keepCloses, renewalDue, startRenewal, takeEndedCloses } from "../auth/leases";
import { orgCreditsStub, type CreditSettlement } from "../durable-objects/org-credits";
import { requestLogJson, type RequestLogInput } from "../usage/request-log";
import { hourStartOf } from "../usage/aggregate";
import type { Pico } from "./money";
import { processBudgetAlerts } from "./budget-alerts";
import { commitSettlement } from "./settle-commit";
import { countTokens, releaseTokens, splitTokenHold } from "../rate-limits/admission";
import { queueMemberSettlement, renewMemberEarly, settleMemberNow, splitReservation } from "../members/budget";

export interface RequestCost {
  /** Everything the key spent (credits + BYOK): counts against the key's limits. */
  totalPico: Pico;
  /** The part paid with gateway credits: debited from the organization. */
  creditsPico: Pico;
}

/** Credit settlements are only sent when there is something to release or record. */
async function settleCredits(env: Env, orgId: string, items: CreditSettlement[]): Promise<void> {
  const useful = items.filter(creditUseful);
  if (useful.length) await orgCreditsStub(env, orgId).settleMany(orgId, useful);
}

/**
 * Settles a request that has no log row to go with it (images, videos, moderation): the spend in
 * the key's DO, and the credit debit (written to D1 by the organization's OrgCredits object,
 * which also releases the credit reservation), side by side.
 */
export async function settleRequest(env: Env, auth: KeyContext, reservationId: string | null, cost: RequestCost, creditsReservationId: string | null = null): Promise<void> {
  const credits = settleCredits(env, auth.organization.id, [{ reservationId: creditsReservationId, credits: cost.creditsPico, log: null }]);
  // The key's and its owner's parts (src/members/budget.ts); a token hold (none on these routes) is given back.
  const { rest, hold } = splitTokenHold(reservationId);
  if (hold) await releaseTokens(env, auth, hold, 0);
  const { key, member } = splitReservation(rest);
  const owner = member === null ? null : settleMemberNow(env, auth, member, cost.totalPico);
  const [result] = await Promise.all([keyStateStub(env, auth.key.id).settle(key, cost.totalPico), credits, owner]);
  await alertOn(env, auth, result);
}

/** How long a credit settlement under a lease may wait to be sent with others. Override: SETTLE_BATCH_MS. */
const DEFAULT_SETTLE_BATCH_MS = 1_000;
/** A batch this large is sent at once: bounds the call's size (a log row is ~1 KB) and the object's transaction. */
const MAX_BATCH = 2_000;

export function settleBatchMs(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).SETTLE_BATCH_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : DEFAULT_SETTLE_BATCH_MS;
}

interface Queued {
  auth: KeyContext;
  credits: CreditSettlement;
}

/** Settlements of one key waiting to be sent, and which request's timer sends them. */
interface Batch {
  items: Queued[];
  due: number;
  owner: object;
}

const batches = new Map<string, Batch>();

/** A reservation of its own (not under a lease): a request waiting in the object may need it released. */
const ownReservation = (id: string | null): boolean => id !== null && !id.startsWith("lease:");

/**
 * What `queueSettlement` hands back: `durable` resolves once the request's record (log row, credit
 * debit, spend) is stored in the key's object, and the answer's last byte waits for it (the stream's
 * final event, a JSON body); `done` is for the request's waitUntil (the rest of the settlement).
 */
export interface Settling {
  durable: Promise<void>;
  done: Promise<void>;
}

/**
 * The chat path (and embeddings): the spend, the log row and the credit debit go into the key's
 * DO outbox in one storage write (see KeyState), committed before the answer ends
 * (settle-commit.ts: one call per round trip per key and isolate, the requests that finish
 * meanwhile ride along), and reach D1 in batches from there. What only tunes admission waits in the
 * isolate and is sent in one call per object:
 *  - the credit settlement (the organization's pending debit and reservation; the debit itself
 *    rides with the record), with the background renewal of the isolate's leases
 *    (`renewLeasesEarly`), about once per lease period for a busy key;
 *  - else when the first of them has waited SETTLE_BATCH_MS (default 1 s; the lease's hold in the
 *    object covers them meanwhile), which also closes leases that ended;
 *  - at once (next macrotask) when one of them released a credit reservation of its own: near zero
 *    credits, requests may be waiting in the object for exactly that.
 *
 * The request that starts a batch sends it unless a renewal took it first, in its own context, so
 * every batch has a live request to send it.
 */
export function queueSettlement(
  env: Env,
  auth: KeyContext,
  reservationId: string | null,
  cost: RequestCost,
  log: RequestLogInput,
  creditsReservationId: string | null = null,
): Settling {
  // Tokens per minute (src/rate-limits/) count settled tokens; their report rides the same waitUntil,
  // and a token bound held at admission is given back with them.
  const { rest, hold } = splitTokenHold(reservationId);
  const tokens = countTokens(env, auth, (log.usage?.promptTokens ?? 0) + (log.usage?.completionTokens ?? 0), hold);
  // The key's and its owner's parts of the reservation (src/members/budget.ts).
  const { key, member } = splitReservation(rest);
  const durable = commitSettlement(env, auth, {
    reservationId: key,
    actual: cost.totalPico,
    outbox: { row: requestLogJson(log), logId: log.logId, organizationId: auth.organization.id, creditsPico: cost.creditsPico },
  });
  const alerted = durable.then((result) => alertOn(env, auth, result));
  const credits = queueCreditSettlement(env, auth, log, cost, creditsReservationId);
  const owner = member === null ? null : queueMemberSettlement(env, auth, member, cost.totalPico);
  return {
    durable: durable.then(() => undefined),
    done: Promise.all([alerted, credits, tokens, owner]).then(() => undefined, logFlushError),
  };
}

function queueCreditSettlement(env: Env, auth: KeyContext, log: RequestLogInput, cost: RequestCost, creditsReservationId: string | null): Promise<void> {
  const keyId = auth.key.id;
  // The key's outbox debits D1 with the log row; the organization's object tracks it until then.
  const entry: Queued = { auth, credits: { reservationId: creditsReservationId, credits: cost.creditsPico, log: { id: log.logId, hour: hourStartOf(log.createdAt) } } };
  const now = Date.now();
  const batch = batches.get(keyId);
  // Sent at once (next macrotask) when it may free credits someone waits for, or the batch is full;
  // otherwise by the batch's owner when due (or earlier, with a renewal).
  const urgent = ownReservation(creditsReservationId) || (batch?.items.length ?? 0) + 1 >= MAX_BATCH;
  if (!batch) return startBatch(env, keyId, [entry], urgent ? now : now + settleBatchMs(env));
  batch.items.push(entry);
  if (!urgent || batch.due <= now) return Promise.resolve();
  return startBatch(env, keyId, batch.items, now);
}

/** This request becomes the batch's owner: it sends it when due, unless someone sent it first. */
function startBatch(env: Env, keyId: string, items: Queued[], due: number): Promise<void> {
  const owner = {};
  batches.set(keyId, { items, due, owner });
  return sendWhenDue(env, keyId, owner, due - Date.now());
}

async function sendWhenDue(env: Env, keyId: string, owner: object, delayMs: number): Promise<void> {
  // Even "at once" waits one macrotask: the requests finishing in this turn join the batch.
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  if (batches.get(keyId)?.owner !== owner) return; // sent earlier, with a renewal or an urgent settlement
  await flushBudgets(env, keyId, null);
}

/**
 * Before a read of a key's spend (key details, the MCP account tool): sends what this isolate has
 * queued for the key, in the reader's own request, so a caller reading right after its own request
 * sees it. Other isolates' batches still arrive within SETTLE_BATCH_MS. Never fails the read.
 */
export async function settleQueuedFor(env: Env, keyId: string): Promise<void> {
  if (!batches.has(keyId)) return;
  await flushBudgets(env, keyId, null).catch(logFlushError);
}

const keyLease = (keyId: string): string => `key:${keyId}`;
const orgLease = (orgId: string): string => `org:${orgId}`;

/**
 * Renews this isolate's key and credit leases before they end, in the background (the caller's
 * waitUntil), with the queued settlements: so requests of a busy key never wait for the object.
 * Called by spending routes right after admission; does nothing unless a lease is near its end.
 */
export function renewLeasesEarly(env: Env, auth: KeyContext, waitUntil: (p: Promise<unknown>) => void): void {
  renewMemberEarly(env, auth, waitUntil);
  if (renewalDue(keyLease(auth.key.id)) || renewalDue(orgLease(auth.organization.id))) {
    waitUntil(flushBudgets(env, auth.key.id, auth).catch(logFlushError));
  }
}

const logFlushError = (err: unknown) => console.error("settlement failed", err instanceof Error ? err.message : String(err));

/**
 * Sends a key's queued settlements, and the renewals of its leases that are due, to the key's
 * object and the organization's (one call each, side by side).
 */
async function flushBudgets(env: Env, keyId: string, caller: KeyContext | null): Promise<void> {
  const items = batches.get(keyId)?.items ?? [];
  batches.delete(keyId);
  const auth = caller ?? items[items.length - 1]?.auth;
  if (!auth) return;
  const orgId = auth.organization.id;
  // A renewal that is due takes the other lease along when that one is past JOIN_AT: the key's and
  // the organization's leases stay in step, one flush renews both.
  const joining = renewalDue(keyLease(keyId)) || renewalDue(orgLease(orgId));
  const keyRenewal = startRenewal(keyLease(keyId), joining);
  const orgRenewal = startRenewal(orgLease(orgId), joining);
  // Without a renewal, leases that ended (an isolate going idle) are closed: their unused slices
  // go back to the budget now rather than at their 15-minute expiry.
  const keyCloses = keyRenewal ? keyRenewal.close : takeEndedCloses(keyLease(keyId));
  const orgCloses = orgRenewal ? orgRenewal.close : takeEndedCloses(orgLease(orgId));
  const credits = items.map((i) => i.credits).filter(creditUseful);
  const keyCall =
    keyRenewal || keyCloses.length > 0
      ? keyStateStub(env, keyId).flush([], {
          close: keyCloses,
          ...(keyRenewal ? { renew: { fingerprint: keyRenewal.fingerprint, fallback: snapshotOf(auth.key), unit: keyRenewal.unit } } : {}),
        })
      : Promise.resolve(null);
  const orgCall =
    credits.length > 0 || orgRenewal || orgCloses.length > 0
      ? orgCreditsStub(env, orgId).settleMany(orgId, credits, { close: orgCloses, ...(orgRenewal ? { renewUnit: orgRenewal.unit } : {}) })
      : Promise.resolve(null);
  const [k, o] = await Promise.allSettled([keyCall, orgCall]);
  if (!keyRenewal && k.status === "rejected") keepCloses(keyLease(keyId), keyCloses);
  if (!orgRenewal && o.status === "rejected") keepCloses(orgLease(orgId), orgCloses);
  if (keyRenewal) {
    if (k.status === "fulfilled") keyRenewal.finish(k.value?.renewed ?? null);
    else keyRenewal.fail();
  }
  if (orgRenewal) {
    if (o.status === "fulfilled") orgRenewal.finish(o.value);
    else orgRenewal.fail();
  }
  if (k.status === "rejected") throw k.reason;
  if (o.status === "rejected") throw o.reason;
}

const creditUseful = (i: CreditSettlement): boolean => i.reservationId !== null || i.credits > 0n;

/** Budget alerts after a settlement; their failures are logged and never affect it. */
async function alertOn(env: Env, auth: KeyContext, result: SettleResult | undefined): Promise<void> {
  if (!result || result.crossed.length === 0) return;
  try {
    await processBudgetAlerts(env, auth, result.crossed);
  } catch (err) {
    console.error("budget alerts failed", err instanceof Error ? err.message : String(err));
  }
}
