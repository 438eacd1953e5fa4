/**
 * Credit admission, isolate side: a credit-paid request reserves the credit-paid upper bound of
 * its cost in the organization's OrgCredits object before it goes upstream, and releases it in
 * its settlement (src/billing/settle.ts). See docs/admission.md.
 */
import type { Env } from "../env";
import { ApiError, paymentRequired } from "../errors/api-error";
import { orgCreditsStub, type CreditGate } from "../durable-objects/org-credits";
import { admissionCallBoundMs, viaLease } from "../auth/leases";
import { admissionWaitMs } from "../auth/gateway-key";
import { maxPico, type Pico } from "./money";

export type CreditAdmission =
  | { ok: true; reservationId: string }
  | { ok: false; error: ApiError };

/** The reservation id of a request whose credit-paid bound is zero (unknown to OrgCredits: a no-op). */
export const ZERO_COST_RESERVATION = "zero-cost";

export const NO_CREDITS_MESSAGE = "The organization has no credits left. Add credits or use your own provider keys (project mode 'hybrid' or 'api-keys').";

/**
 * Reserves `estimate` of the organization's credits. Refused (402) when the settled balance is
 * at or below 0 (unless `estimate` is 0: a free model is served at a zero balance); 429 `budget_busy` when requests in flight hold the rest past the wait bound.
 * The caller decides: fall back to BYOK candidates, or throw `error`.
 */
export async function admitCredits(env: Env, orgId: string, estimate: Pico): Promise<CreditAdmission> {
  const amount = estimate > 0n ? estimate : 0n;
  // A true upper bound of zero (a model priced at zero) costs nothing: served at any balance,
  // without asking the organization's object (its settlement releases nothing).
  if (amount === 0n) return { ok: true, reservationId: ZERO_COST_RESERVATION };
  const r = await viaLease<CreditGate>(
    `org:${orgId}`,
    amount,
    { boundMs: admissionCallBoundMs(admissionWaitMs(env)) },
    async (close) => {
      const gate: CreditGate = await orgCreditsStub(env, orgId).reserve(orgId, amount, { waitMs: admissionWaitMs(env), lease: true, close });
      return gate;
    },
    (g) => (g.ok && g.lease ? { lease: g.lease } : null),
  );
  // Steady state: admitted against this isolate's credit lease, no round trip.
  if ("reservationId" in r) return { ok: true, reservationId: r.reservationId };
  const gate = r.gate;
  if (gate.ok) return { ok: true, reservationId: gate.reservationId };
  if (gate.reason === "no_credits") return { ok: false, error: paymentRequired(NO_CREDITS_MESSAGE) };
  const retryAfter = String(gate.retryAfterSeconds ?? 1);
  return {
    ok: false,
    error: new ApiError(429, `Requests in flight hold the rest of the organization's credits; retry in ${retryAfter} s.`, {
      type: "rate_limit_error",
      code: "budget_busy",
      headers: { "retry-after": retryAfter },
    }),
  };
}

/** Gives back a credit reservation that will not be settled with a request (its key was refused). */
export async function releaseCredits(env: Env, orgId: string, admission: Promise<CreditAdmission>): Promise<void> {
  try {
    const a = await admission;
    if (a.ok) await orgCreditsStub(env, orgId).settleMany(orgId, [{ reservationId: a.reservationId, credits: 0n, log: null }]);
  } catch (err) {
    console.error("credit release failed", err instanceof Error ? err.message : String(err));
  }
}

/**
 * The credit step of a route with several candidates: the credit-paid ones reserve the largest of
 * their bounds. Refused, they are dropped and the others (own keys, free models) go on alone, or
 * the refusal (402 / 429) is thrown when none is left.
 */
export async function admitCreditCandidates<C>(
  env: Env,
  orgId: string,
  candidates: readonly C[],
  creditPaid: (c: C) => boolean,
  bound: (c: C) => Pico,
): Promise<{ candidates: C[]; reservationId: string | null }> {
  const paid = candidates.filter(creditPaid);
  if (paid.length === 0) return { candidates: [...candidates], reservationId: null };
  const credit = await admitCredits(env, orgId, paid.map(bound).reduce(maxPico, 0n));
  if (credit.ok) return { candidates: [...candidates], reservationId: credit.reservationId };
  const rest = candidates.filter((c) => !creditPaid(c));
  if (rest.length === 0) throw credit.error;
  return { candidates: rest, reservationId: null };
}
