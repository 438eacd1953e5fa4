/**
 * Member budgets (docs/keys-and-iam.md#member-and-team-spending-limits): the spend of every key a
 * member owns, against the member's limits and their teams' (src/members/limits.ts), kept by a
 * KeyState object named `member:<member id>` under the same admission rules as a key (strict, no
 * false refusals, FIFO waits, leases; docs/admission.md). Only members with a limit have one in
 * use: `admitKey` admits the request there too, side by side with the key, and the reservation id
 * it hands back carries both parts (`joinReservations`); settlement splits them again.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { getDb } from "../db/client";
import { apiKeys, keySpend, members, teamMembers, teams } from "../db/schema";
import { ApiError, unauthorized } from "../errors/api-error";
import { keyStateStub, type GateResult, type KeySnapshot, type Settlement } from "../durable-objects/key-state";
import { admissionCallBoundMs, keepCloses, renewalDue, startRenewal, takeEndedCloses, viaLease } from "../auth/leases";
import type { Pico } from "../billing/money";
import type { LimitState } from "../keys/limits";
import { effectiveMemberLimits, limitsOf, NO_LIMITS, type MemberLimits } from "./limits";

/** The member budget object's "secret": a member budget has no key secret, only this constant. */
const FINGERPRINT = "member";
const SEP = "|member|";

export const memberBudgetName = (memberId: string): string => `member:${memberId}`;

export function memberSnapshot(organizationId: string, memberId: string, limits: LimitState, version: number): KeySnapshot {
  return { keyId: memberBudgetName(memberId), organizationId, fingerprint: FINGERPRINT, status: "active", expiresAt: null, version, ...limitsOf(limits) };
}

/** One reservation id for the key's and the member's reservations (settlement splits it). */
export const joinReservations = (key: string | null, member: string | null): string | null => (member === null ? key : `${key ?? ""}${SEP}${member}`);

export function splitReservation(id: string | null): { key: string | null; member: string | null } {
  if (id === null) return { key: null, member: null };
  const cut = id.indexOf(SEP);
  if (cut < 0) return { key: id, member: null };
  return { key: id.slice(0, cut) || null, member: id.slice(cut + SEP.length) };
}

function waitMsOf(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).ADMISSION_WAIT_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : 3_000;
}

/** The spec's wording for member rules, applied to spending limits. */
const BY = { member: "an organization member spending limit set by the org admin", team: "inherited from an organization team spending limit" } as const;

function refusal(g: Extract<GateResult, { ok: false }>, limits: MemberLimits): ApiError {
  if (g.reason === "budget_busy") {
    const retryAfter = String(g.retryAfterSeconds ?? 1);
    return new ApiError(429, `Requests in flight hold the rest of the spending limit of this key's owner; retry in ${retryAfter} s.`, {
      type: "rate_limit_error",
      code: "budget_busy",
      headers: { "retry-after": retryAfter },
    });
  }
  if (g.reason === "period_usage_limit_reached") {
    const resets = /resets at (\S+?)\.?$/.exec(g.message)?.[1];
    return unauthorized(
      `Usage limit reached: the owner of this API key has spent their recurring limit of $${limits.periodUsageLimit} per ${limits.periodUsageDurationValue} ${limits.periodUsageDurationUnit}(s)${resets ? `; the window resets at ${resets}` : ""} (${BY[limits.periodUsageLimitFrom ?? "member"]}).`,
      "usage_limit_reached",
    );
  }
  return unauthorized(`Usage limit reached: the owner of this API key has spent their all-time limit of $${limits.usageLimit} (${BY[limits.usageLimitFrom ?? "member"]}).`, "usage_limit_reached");
}

/**
 * Admits `amount` against the budget of the key's owner: null when the member has no limit, else
 * the member part of the reservation. Throws 401 `usage_limit_reached` (member wording) or 429.
 */
export async function admitMember(env: Env, ctx: KeyContext, amount: Pico): Promise<string | null> {
  const limits = ctx.member.limits;
  if (!limits) return null;
  const name = memberBudgetName(ctx.member.id);
  const fallback = memberSnapshot(ctx.organization.id, ctx.member.id, limits, 0);
  const r = await viaLease<GateResult>(
    name,
    amount,
    { boundMs: admissionCallBoundMs(waitMsOf(env)) },
    async (close) => {
      const gate: GateResult = await keyStateStub(env, name).admit(FINGERPRINT, fallback, amount, undefined, { waitMs: waitMsOf(env), lease: true, close });
      return gate;
    },
    (g) => (g.ok && g.lease ? { lease: g.lease } : null),
  );
  if ("reservationId" in r) return r.reservationId;
  if (r.gate.ok) return r.gate.reservationId;
  throw refusal(r.gate, limits);
}

/** Gives a member reservation back (the request was refused after admission). */
export async function cancelMember(env: Env, ctx: KeyContext, reservationId: string): Promise<void> {
  await keyStateStub(env, memberBudgetName(ctx.member.id))
    .cancel(reservationId)
    .catch((err: unknown) => console.error("member reservation release failed", err instanceof Error ? err.message : String(err)));
}

// ---------- settlement (isolate side, batched like the key's: src/billing/settle.ts) ----------

interface Batch {
  items: Settlement[];
  auth: KeyContext;
}
const batches = new Map<string, Batch>();

function batchMs(env: Env): number {
  const raw = Number((env as unknown as Record<string, unknown>).SETTLE_BATCH_MS);
  return Number.isFinite(raw) && raw >= 0 ? raw : 1_000;
}

/**
 * Settles the member part of a request (images, videos, moderations) at once. Some answers wait for
 * their settlement, so a failed call is resent once right away; after that it is parked and rides
 * with the member's next flush or settlement from this isolate.
 */
export async function settleMemberNow(env: Env, auth: KeyContext, reservationId: string, actual: Pico): Promise<void> {
  const name = memberBudgetName(auth.member.id);
  const earlier = parked.has(name) ? resendParked(env, name) : null;
  await Promise.all([deliver(env, name, { id: crypto.randomUUID(), items: [{ reservationId, actual }], since: Date.now() }, RESEND_NOW_MS), earlier]);
}

/**
 * Settlements sent under an id (src/durable-objects/applied-ids.ts). A failed call may have landed
 * (only its answer lost), so a resend carries the same settlements under the same id: the object
 * applies them once. Without resending, a failed flush dropped them and the member's spend fell
 * behind the request records.
 */
interface Sent {
  id: string;
  items: Settlement[];
  since: number;
}
/** Pauses before each resend of a batched flush (the request's waitUntil); after the last, the flush is parked. */
const RESEND_AFTER_MS = [100, 1_000, 5_000] as const;
/** The same for an immediate settlement, which an answer may be waiting for. */
const RESEND_NOW_MS = [100] as const;
/** Parked flushes ride with the member's next flush from this isolate, for at most this long (well within APPLIED_ID_TTL_MS). */
const RESEND_FOR_MS = 30 * 60 * 1000;
/** Flushes that failed every resend, per member budget. */
const parked = new Map<string, Sent[]>();

async function deliver(env: Env, name: string, sent: Sent, pauses: readonly number[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await keyStateStub(env, name).flush(sent.items, { close: [], id: sent.id });
      return;
    } catch (err) {
      const pause = pauses[attempt];
      if (pause === undefined) {
        park(name, sent);
        throw err;
      }
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

function park(name: string, sent: Sent): void {
  const list = parked.get(name) ?? [];
  list.push(sent);
  parked.set(name, list);
}

/** Resends the member's parked flushes (each once now; a failure parks it again), dropping those too old to resend safely. */
async function resendParked(env: Env, name: string): Promise<void> {
  const list = parked.get(name);
  if (!list) return;
  parked.delete(name);
  const now = Date.now();
  const results = await Promise.allSettled(
    list.map((sent) => {
      if (now - sent.since <= RESEND_FOR_MS) return deliver(env, name, sent, []);
      console.error("member settlement dropped: not delivered within", RESEND_FOR_MS, "ms", sent.items.length, "settlement(s)");
      return Promise.resolve();
    }),
  );
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

/**
 * Queues the member part of a settled request: sent with the member's next lease renewal, else
 * after SETTLE_BATCH_MS, or at once when it releases a reservation of its own (requests may wait
 * for it near the limit). The promise is for the request's waitUntil.
 */
export function queueMemberSettlement(env: Env, auth: KeyContext, reservationId: string, actual: Pico): Promise<void> {
  const name = memberBudgetName(auth.member.id);
  const urgent = !reservationId.startsWith("lease:");
  let b = batches.get(name);
  if (b) {
    b.items.push({ reservationId, actual });
    return urgent ? sendAfter(env, name, b, 0) : Promise.resolve();
  }
  b = { items: [{ reservationId, actual }], auth };
  batches.set(name, b);
  return sendAfter(env, name, b, urgent ? 0 : batchMs(env));
}

async function sendAfter(env: Env, name: string, b: Batch, ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
  if (batches.get(name) !== b) return;
  await flushMember(env, name, b.auth);
}

/** After admission: renews the member's lease in the background when it nears its end. */
export function renewMemberEarly(env: Env, auth: KeyContext, waitUntil: (p: Promise<unknown>) => void): void {
  const name = memberBudgetName(auth.member.id);
  if (auth.member.limits && renewalDue(name)) waitUntil(flushMember(env, name, auth).catch(logError));
}

const logError = (err: unknown) => console.error("member settlement failed", err instanceof Error ? err.message : String(err));

async function flushMember(env: Env, name: string, auth: KeyContext): Promise<void> {
  const items = batches.get(name)?.items ?? [];
  batches.delete(name);
  const earlier = parked.has(name) ? resendParked(env, name) : null;
  await Promise.all([sendFlush(env, name, auth, items), earlier]);
}

async function sendFlush(env: Env, name: string, auth: KeyContext, items: Settlement[]): Promise<void> {
  const renewal = startRenewal(name);
  const close = renewal ? renewal.close : takeEndedCloses(name);
  if (items.length === 0 && !renewal && close.length === 0) return;
  const fallback = memberSnapshot(auth.organization.id, auth.member.id, auth.member.limits ?? NO_LIMITS, 0);
  const sent: Sent = { id: crypto.randomUUID(), items, since: Date.now() };
  try {
    const r = await keyStateStub(env, name).flush(items, { close, id: sent.id, ...(renewal ? { renew: { fingerprint: FINGERPRINT, fallback, unit: renewal.unit } } : {}) });
    renewal?.finish(r.renewed ? { lease: r.renewed.lease } : null);
  } catch (err) {
    if (renewal) renewal.fail();
    else keepCloses(name, close);
    if (items.length === 0) throw err;
    // The settlements alone, under the same id; the leases' part is retried by the next flush.
    await new Promise((r) => setTimeout(r, RESEND_AFTER_MS[0]));
    await deliver(env, name, sent, RESEND_AFTER_MS.slice(1));
  }
}

// ---------- admin side ----------

/** The member's own limits and their teams', as stored. */
async function storedLimits(env: Env, organizationId: string, memberId: string): Promise<{ own: LimitState; teams: LimitState[] } | null> {
  const db = getDb(env.DB);
  const [own, teamRows] = await Promise.all([
    db.select().from(members).where(and(eq(members.id, memberId), eq(members.organizationId, organizationId))).get(),
    db
      .select({ usageLimit: teams.usageLimit, periodUsageLimit: teams.periodUsageLimit, periodUsageDurationValue: teams.periodUsageDurationValue, periodUsageDurationUnit: teams.periodUsageDurationUnit })
      .from(teamMembers)
      .innerJoin(teams, eq(teams.id, teamMembers.teamId))
      .where(eq(teamMembers.memberId, memberId)),
  ]);
  return own ? { own: limitsOf(own), teams: teamRows } : null;
}

/** The member's settled all-time spend as D1 holds it: the sum over every key they own (`key_spend`). */
async function settledSpendOfKeys(env: Env, memberId: string): Promise<Pico> {
  const rows = await getDb(env.DB)
    .select({ usage: keySpend.usagePico })
    .from(keySpend)
    .innerJoin(apiKeys, eq(apiKeys.id, keySpend.apiKeyId))
    .where(eq(apiKeys.createdBy, memberId));
  return rows.reduce((a, r) => a + BigInt(r.usage), 0n);
}

/**
 * After a change of a member's limits, their teams' limits or their teams: pushes the limits in
 * force to the member's budget object (awaited: the change is immediate, like a key's). A member
 * budget that starts (or restarts after a time without limits) first takes over what the member's
 * keys spent meanwhile, as D1 has it, so an all-time limit counts all of it. A budget that was
 * counting already takes nothing over: there D1 is ahead only by requests whose member part is on
 * its way (queued in an isolate for up to SETTLE_BATCH_MS), and taking those over counted them
 * twice once they arrived.
 */
export async function syncMemberBudget(env: Env, organizationId: string, memberId: string): Promise<MemberLimits | null> {
  const stored = await storedLimits(env, organizationId, memberId);
  if (!stored) return null;
  const effective = effectiveMemberLimits(stored.own, stored.teams);
  const stub = keyStateStub(env, memberBudgetName(memberId));
  let version = Date.now() * 2;
  if (effective) {
    const [counting, spend, keys] = await Promise.all([stub.limited(), stub.getSpend(), settledSpendOfKeys(env, memberId)]);
    if (!counting && keys > spend.usage && spend.periodStartedAt === null) {
      // All-time only while catching up: the spend is not the new window's.
      await stub.sync(memberSnapshot(organizationId, memberId, { ...effective, periodUsageLimit: null, periodUsageDurationValue: null, periodUsageDurationUnit: null }, version++));
      await stub.settle(null, keys - spend.usage);
    }
  }
  await stub.sync(memberSnapshot(organizationId, memberId, effective ?? NO_LIMITS, version));
  return effective;
}
