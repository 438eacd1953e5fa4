/**
 * The chat pipeline's admission step, on the admission-with-early-call path every spending route
 * shares (`admitWithEarlyCall`, src/billing/early-call.ts: the rules, the bound on the operator's
 * exposure, the freshness of the rules a call goes out under, the counters). While the key's and,
 * for credit-paid candidates, the organization's reservations are asked, the response cache is
 * read and, on a miss, the plan is ranked and its first attempt offered as the early call. Nothing
 * of either reaches the client before admission answered.
 *
 * What comes back is the admitted request: the context to go on with (a newer one when the key's
 * object reported it: the candidates are selected again under it, and a plan or cache read made
 * under the old one is dropped), the credit reservation, the cache key or hit, and the plan.
 */
import type { Env } from "../../env";
import type { KeyContext } from "../../context/key-context";
import type { ChatRequest } from "../../providers/types";
import type { RoutingAttempt } from "../../db/schema";
import type { ResolvedModel } from "../../routing/parse-model-id";
import type { Candidate, RequestNeeds, Selection } from "../../routing/candidates";
import { resolveFallbacks, selectWithFallbacks } from "../../routing/fallback-models";
import { orderCandidates } from "../../routing/order";
import { explorationRate, pinnedProbeRate } from "../../routing/score";
import { rankingView } from "../../routing/candidate-stats";
import { cacheKey, isCacheable, readCache, type CachedAnswer } from "../../cache/response-cache";
import { admitWithEarlyCall, type EarlyPlan } from "../../billing/early-call";
import { admitCredits } from "../../billing/credits";
import { estimateUpperBound, tokensUpperBound } from "../../billing/estimate";
import { renewLeasesEarly } from "../../billing/settle";
import { runAttempt, type AttemptResult } from "./attempt";
import type { Running } from "./hedge";
import type { RequestTimeouts } from "../../routing/timeouts";
import { boundTarget, isCreditPaid, resolve } from "./model-facts";
import { attemptRecord, type Run } from "./run";

/** The request's ranked plan of candidates. */
export function planFor(env: Env, headers: Headers, candidates: Candidate[], needs: RequestNeeds): Candidate[] {
  const view = rankingView(candidates, needs.callerContinent);
  return orderCandidates(candidates, needs, {
    noFallback: (headers.get("x-no-fallback") ?? "").trim().toLowerCase() === "true",
    explorationRate: explorationRate(env),
    pinnedProbeRate: pinnedProbeRate(env),
    stats: view.stats,
    ...(needs.callerContinent ? { needsEvidence: view.needsEvidence } : {}),
  });
}

/** What ran while admission was asked: the cache read, then (no hit) the plan. */
interface Prepared {
  key: string | null;
  hit: CachedAnswer | null;
  plan: Candidate[] | null;
}

export interface ChatAdmitted {
  resolved: ResolvedModel;
  needs: RequestNeeds;
  /** The candidates admission and the credit step left (credit-paid ones dropped when credits refused). */
  candidates: Candidate[];
  /** The response-cache key (null: not cacheable), and a hit to serve instead of calling upstream. */
  cacheKey: string | null;
  hit: CachedAnswer | null;
  plan: Candidate[];
  /** The early call, as a running attempt, when `cand` is the candidate it was started for (once). */
  takeEarly(cand: Candidate): Running | null;
}

/** The early call a stream holds open: its own upstream request, freed when the call is cancelled. */
function releaseAttempt(r: AttemptResult): void {
  if (r.ok && r.kind === "stream") {
    r.abort.abort();
    void r.iterator.return?.();
  }
}

/**
 * Admits `run` (its key, and credits for credit-paid candidates) with the cache read and the first
 * attempt under way meanwhile; from then on `run.dropEarly` cancels an early call nobody took. A
 * refusal throws the admission's own error, after the early call was cancelled and recorded in
 * `routing` (and `run.cancelledEarly`) at cost 0. Throws the selection's error when no candidate
 * is left under the admitted context.
 */
export async function admitChat(run: Run, req: ChatRequest, resolved: ResolvedModel, selection: Selection, stream: boolean, routing: RoutingAttempt[], timeouts: RequestTimeouts): Promise<ChatAdmitted> {
  const { env, headers, waitUntil } = run.input;
  const cached = run.auth;
  const creditBound = (list: readonly Candidate[]) => estimateUpperBound(req, list.filter(isCreditPaid).map((c) => boundTarget(req, c)));
  const estimate = selection.ok ? estimateUpperBound(req, selection.candidates.map((c) => boundTarget(req, c))) : 0n;
  const prepared = selection.ok ? prepare(run, cached, req, selection, stream) : Promise.resolve<Prepared>({ key: null, hit: null, plan: null });
  let earlyCand: Candidate | null = null;
  let earlyStartedAt = 0;
  // Stops the early attempt when a hedged one answered first (hedge.ts): not an admission refusal.
  // Without hedging nothing stops it that way, and the request keeps one signal fewer.
  const hedgeStop = timeouts.hedging ? new AbortController() : null;
  const early = prepared.then((p): EarlyPlan<AttemptResult> | null => {
    const first = p.plan?.[0];
    if (!first) return null;
    earlyCand = first;
    return {
      creditPaid: isCreditPaid(first),
      run: (signal) => {
        earlyStartedAt = Date.now();
        return runAttempt(env, req, first, stream, hedgeStop ? AbortSignal.any([signal, hedgeStop.signal]) : signal, timeouts, run.input.probe);
      },
      clientSignal: run.input.signal,
      release: releaseAttempt,
    };
  });
  const admissionStart = Date.now();
  const admitted = await admitWithEarlyCall<AttemptResult>(env, cached, {
    estimate,
    tokenBound: selection.ok ? tokensUpperBound(req, selection.candidates.map((c) => boundTarget(req, c))) : 0,
    creditEstimate: selection.ok && selection.candidates.some(isCreditPaid) ? creditBound(selection.candidates) : null,
    early,
    onCancelled: (ms) => {
      if (!earlyCand) return;
      const rec = attemptRecord(run, earlyCand, 499, false, ms, undefined, "early_cancelled");
      run.cancelledEarly = rec;
      routing.push(rec);
    },
    waitUntil,
  });
  run.trace.admission = { at: admissionStart - run.startedAt, ms: Date.now() - admissionStart };
  run.input.probe?.mark("admitted");
  run.input.probe?.mark("credits");
  run.dropEarly = () => admitted.drop();
  run.admitted = true;
  run.reservationId = admitted.admission.reservationId;
  renewLeasesEarly(env, run.auth, waitUntil);
  // The route's own work failed (a cache read): met here, now that the reservation is the request's.
  const before = await prepared;
  if (admitted.fresh) {
    // Newer key version (rules, project, keys changed): decide again with the fresh context.
    run.auth = admitted.admission.context;
    resolved = resolve(run.auth, req);
    selection = selectWithFallbacks(env, run.auth, resolved, resolveFallbacks(run.auth, req, resolved), req, run.input.clientIp, run.input.callerContinent);
  }
  if (!selection.ok) throw selection.error;
  let candidates = selection.candidates;

  // Credit-paid candidates need a credit reservation (asked beside the key's, unless a fresh context
  // brought them or the organization's object failed: asked now).
  if (candidates.some(isCreditPaid)) {
    const c = admitted.credit ?? (await admitCredits(env, run.auth.organization.id, creditBound(candidates)));
    if (c.ok) run.creditsReservationId = c.reservationId;
    else {
      // A credit-paid early call was cancelled with the refusal; one on the key's own provider key stays.
      candidates = candidates.filter((cand) => !isCreditPaid(cand));
      if (candidates.length === 0) throw c.error;
    }
  }

  // A fresh context: the cache key and the plan made under the old one do not apply.
  let key = before.key;
  let hit = before.hit;
  if (admitted.fresh) {
    key = isCacheable(run.auth, req, headers) ? await cacheKey(run.auth, req) : null;
    hit = key ? await readCache(env, key) : null;
  }
  if (hit && (hit.kind === "stream") !== stream) hit = null;
  const kept = admitted.fresh ? null : before.plan?.filter((c) => candidates.includes(c));
  return {
    resolved,
    needs: selection.needs,
    candidates,
    cacheKey: key,
    hit,
    plan: kept ?? planFor(env, headers, candidates, selection.needs),
    takeEarly: (cand) => {
      if (cand !== earlyCand) return null;
      const result = admitted.take();
      return result ? { cand, startedAt: earlyStartedAt, result, stop: () => hedgeStop?.abort() } : null;
    },
  };
}

/** While admission is asked: the response cache read (served only once admitted), else the plan. */
async function prepare(run: Run, auth: KeyContext, req: ChatRequest, selection: Extract<Selection, { ok: true }>, stream: boolean): Promise<Prepared> {
  const { env, headers } = run.input;
  let key: string | null = null;
  if (isCacheable(auth, req, headers)) {
    const readStart = Date.now();
    key = await cacheKey(auth, req);
    const hit = await readCache(env, key);
    run.trace.cacheRead = { at: readStart - run.startedAt, ms: Date.now() - readStart, hit: hit !== null && (hit.kind === "stream") === stream };
    if (hit && (hit.kind === "stream") === stream) return { key, hit, plan: null };
  }
  const plan = planFor(env, headers, selection.candidates, selection.needs);
  run.input.probe?.mark("early");
  return { key, hit: null, plan };
}
