/**
 * Early upstream calls (docs/admission.md, "The first byte does not wait for the objects"): the
 * first upstream attempt of a spending request starts while its admission is still being asked,
 * so the budget objects' round trip hides behind the provider's work. `admitWithEarlyCall` is the
 * one admission-with-early-call path of every route whose upstream call can be taken back: chat
 * and its front doors (Messages, Responses), embeddings, images and moderations. Video job
 * submissions use it without an early call: a job, once created, cannot be recalled.
 *
 * Nothing of an early call reaches the client before admission answered: the route awaits the
 * admission before it uses the call's result. A refused admission (or a newer key version, a
 * refused credit reservation for a credit-paid call) cancels the call: its upstream request is
 * aborted, the route records it in the request's log row (`routing[].error_type =
 * "early_cancelled"`, cost 0: not billed to the key), and it is counted in this isolate (the
 * operator's exposure).
 *
 * The exposure is bounded per isolate and key, over all routes together: at most one early call
 * of a key is in doubt (started, admission not answered yet) at a time, and after a refusal of the
 * key (or of its organization's credits, for credit-paid calls) no early call starts for it until
 * one of its requests is admitted again. So a key that is disabled, rolled, deleted or at its
 * limit costs at most one cancelled early call per isolate per state change.
 *
 * The rules the call goes out under are bounded in age too (src/context/policy-freshness.ts): only
 * rules the key's object or the D1 primary confirmed less than `POLICY_FRESHNESS_MS` (30 s) ago,
 * never for an organization in strict mode. Otherwise the first call waits for admission.
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { admitKey, type Admission } from "../auth/gateway-key";
import { rulesFreshEnough } from "../context/policy-freshness";
import { admitCredits, releaseCredits, type CreditAdmission } from "./credits";
import type { Pico } from "./money";

const MAX_ENTRIES = 10_000;
/** Microtask turns within which an admission that makes no round trip has answered (see the test). */
const LOCAL_ANSWER_TURNS = 12;
/** Keys (`key:<id>`) and organizations (`org:<id>`) whose last admission answer was a refusal. */
const refused = new Set<string>();
/** Keys with an early call in doubt. */
const inDoubt = new Set<string>();
let cancelledTotal = 0;
let startedTotal = 0;

const keyName = (keyId: string) => `key:${keyId}`;
const orgName = (orgId: string) => `org:${orgId}`;

/**
 * Whether a request of this key may start its first attempt before admission answered: no other
 * early call of the key in doubt, no refusal since its last admission, and rules fresh enough.
 */
export function earlyAllowed(env: Env, auth: KeyContext, creditPaid: boolean, now = Date.now()): boolean {
  const keyId = auth.key.id;
  if (inDoubt.has(keyName(keyId)) || refused.has(keyName(keyId))) return false;
  if (creditPaid && refused.has(orgName(auth.organization.id))) return false;
  return rulesFreshEnough(env, auth, now);
}

function mark(name: string, wasRefused: boolean): void {
  if (!wasRefused) {
    refused.delete(name);
    return;
  }
  if (refused.size >= MAX_ENTRIES) refused.clear();
  refused.add(name);
}

/** Records the key's admission answer: a refusal stops early calls for it until it is admitted again. */
export const noteKeyAnswer = (keyId: string, wasRefused: boolean): void => mark(keyName(keyId), wasRefused);
/** The same for the organization's credit reservation (credit-paid candidates only). */
export const noteCreditAnswer = (orgId: string, wasRefused: boolean): void => mark(orgName(orgId), wasRefused);

/** Early calls cancelled by this isolate so far (tests). */
export const cancelledEarlyCalls = (): number => cancelledTotal;
/** Early calls started by this isolate so far (tests). */
export const startedEarlyCalls = (): number => startedTotal;

export interface EarlyCall<R> {
  startedAt: number;
  /** The attempt's result; use it only once admission admitted the request. */
  result: Promise<R>;
  /** Admission answered (admitted or not): the key's slot is free again. */
  settle(): void;
  /** Admission refused (or the call no longer fits the request): aborts it, counts it. */
  cancel(): void;
}

/**
 * Starts `run` now, as the key's early call. Its signal aborts when the call is cancelled, and
 * when `clientSignal` aborts (the client went away; the caller tells the two apart by that
 * signal). `release` frees what a result that already arrived still holds open (a stream).
 */
export function startEarly<R>(keyId: string, run: (signal: AbortSignal) => Promise<R>, opts: { clientSignal?: AbortSignal | undefined; release?: (r: R) => void } = {}): EarlyCall<R> {
  const name = keyName(keyId);
  inDoubt.add(name);
  startedTotal++;
  const ctl = new AbortController();
  const { clientSignal, release } = opts;
  if (clientSignal?.aborted) ctl.abort();
  else clientSignal?.addEventListener("abort", () => ctl.abort(), { once: true });
  const result = run(ctl.signal);
  let settled = false;
  let cancelled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    inDoubt.delete(name);
  };
  return {
    startedAt: Date.now(),
    result,
    settle,
    cancel() {
      settle();
      if (cancelled) return;
      cancelled = true;
      cancelledTotal++;
      ctl.abort();
      result.then((r) => release?.(r)).catch(() => undefined);
    },
  };
}

/** The first attempt a route can start before admission answered. */
export interface EarlyPlan<R> {
  /** Paid from the organization's credits: a refused credit reservation cancels it too. */
  creditPaid: boolean;
  run: (signal: AbortSignal) => Promise<R>;
  /** The client went away: aborts the call like any attempt (the route tells it from a cancel by this signal). */
  clientSignal?: AbortSignal | undefined;
  /** Frees what a result that already arrived still holds open (a stream) when the call is cancelled. */
  release?: (r: R) => void;
}

export interface EarlyAdmitted<R> {
  admission: Admission;
  /**
   * The key's object reported a newer context (`admission.context`): the route selects its
   * candidates again under it. The early call (made under the old rules) was cancelled, and a
   * credit reservation asked beside the key was given back (`credit` is null).
   */
  fresh: boolean;
  /**
   * The organization's answer for the credit-paid candidates, when it was asked beside the key
   * (null: not asked, given back, or the object failed: the route asks `admitCreditCandidates`).
   */
  credit: CreditAdmission | null;
  /** The surviving early call's result, once: the route's first attempt of that candidate. */
  take(): Promise<R> | null;
  /** Cancels the early call when the route does not use it after all (no-op once taken or cancelled). */
  drop(): void;
}

/**
 * Admission of a route with an early call: the key's reservation (`admitKey`) and, when the cached
 * context has credit-paid candidates (`creditEstimate` not null), the organization's credit
 * reservation, asked at the same time, and meanwhile `early` (when `earlyAllowed`). `early` may be
 * a promise: the route's own work while admission is asked (chat reads its response cache first,
 * and plans a call only on a miss). A refusal of the key cancels the call, gives the credit
 * reservation back and throws the same error as `admitKey` would; `onCancelled(ms)` is told of
 * every cancel so the route logs it (cost 0).
 */
export async function admitWithEarlyCall<R>(
  env: Env,
  auth: KeyContext,
  o: {
    estimate: Pico;
    /** The request's token upper bound, reserved against a key's own tokens-per-minute window. */
    tokenBound?: number;
    creditEstimate: Pico | null;
    early: EarlyPlan<R> | null | Promise<EarlyPlan<R> | null>;
    onCancelled: (ms: number) => void;
    waitUntil: (p: Promise<unknown>) => void;
  },
): Promise<EarlyAdmitted<R>> {
  const keyId = auth.key.id;
  const orgId = auth.organization.id;
  const credit = o.creditEstimate === null ? null : admitCredits(env, orgId, o.creditEstimate);
  // Awaited below; a failure must not surface as an unhandled rejection meanwhile.
  credit?.catch(() => undefined);
  const keyAdmission = admitKey(env, auth, o.estimate, o.tokenBound ?? 0);
  let answered = false;
  keyAdmission.then(
    () => (answered = true),
    () => (answered = true),
  );
  // The route's work while admission is asked; when it fails, the route meets its error itself.
  const plan = await Promise.resolve(o.early).catch(() => null);
  // An early call only hides a round trip. Admission answered from this isolate's lease takes none:
  // it answers within a few microtasks, where a round trip takes I/O, so it gets those first (the
  // route's own work often finishes sooner, and an early call costs a controller, a listener on the
  // client's signal and the bookkeeping of a call in doubt).
  for (let turn = 0; plan && !answered && turn < LOCAL_ANSWER_TURNS; turn++) await undefined;
  // Admission that answered meanwhile (a lease, or the route's work took longer) needs no early call.
  let call = plan && !answered && earlyAllowed(env, auth, plan.creditPaid) ? startEarly(keyId, plan.run, { clientSignal: plan.clientSignal, release: plan.release }) : null;
  const cancel = () => {
    if (!call) return;
    call.cancel();
    o.onCancelled(Date.now() - call.startedAt);
    call = null;
  };

  let admission: Admission;
  try {
    admission = await keyAdmission;
  } catch (err) {
    noteKeyAnswer(keyId, true);
    cancel();
    if (credit) o.waitUntil(releaseCredits(env, orgId, credit));
    throw err;
  }
  noteKeyAnswer(keyId, false);
  call?.settle();
  const fresh = admission.context !== auth;
  let answer: CreditAdmission | null = null;
  let creditFailed = false;
  if (credit) {
    try {
      answer = await credit;
      noteCreditAnswer(orgId, !answer.ok);
    } catch {
      // The organization's object failed: the route asks again (and answers its error) in its own steps.
      creditFailed = true;
    }
  }
  if (fresh) {
    cancel();
    // Asked for the candidates of the old context: the route asks again for the new ones.
    if (answer?.ok) o.waitUntil(releaseCredits(env, orgId, Promise.resolve(answer)));
    answer = null;
  } else if (plan?.creditPaid && (creditFailed || (answer && !answer.ok))) cancel();
  return {
    admission,
    fresh,
    credit: answer,
    take: () => {
      const c = call;
      call = null;
      return c ? c.result : null;
    },
    drop: cancel,
  };
}
