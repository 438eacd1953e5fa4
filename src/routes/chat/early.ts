/**
 * Early upstream calls of the chat pipeline (docs/admission.md, "The first byte does not wait for
 * the objects"): while admission is asked, the response cache is read and the first attempt of
 * the plan starts as the key's early call (src/billing/early-call.ts: the rules, the bound on the
 * operator's exposure and the counters are shared with every route that calls early). Nothing of
 * it reaches the client before admission answered: the pipeline (execute.ts) awaits the admission
 * before it uses the attempt's result, and cancels the call when admission refuses.
 */
import type { Env } from "../../env";
import type { KeyContext } from "../../auth/key-context";
import type { ChatRequest } from "../../providers/types";
import type { Candidate, RequestNeeds, Selection } from "../../routing/candidates";
import { orderCandidates } from "../../routing/order";
import { explorationRate, pinnedProbeRate } from "../../routing/score";
import { candidateStats } from "../../routing/candidate-stats";
import { cacheKey, isCacheable, readCache, type CachedAnswer } from "../../cache/response-cache";
import { earlyAllowed, startEarly as startEarlyCall, type EarlyCall as GenericEarlyCall } from "../../billing/early-call";
import { runAttempt, type AttemptResult } from "./attempt";

export { cancelledEarlyCalls, noteCreditAnswer, noteKeyAnswer } from "../../billing/early-call";

export interface EarlyCall extends GenericEarlyCall<AttemptResult> {
  cand: Candidate;
}

/**
 * Starts `cand`'s attempt now. `clientSignal` (the client went away) aborts it like any attempt;
 * the caller tells a client abort from a cancel by that signal.
 */
export function startEarly(env: Env, req: ChatRequest, cand: Candidate, stream: boolean, keyId: string, clientSignal?: AbortSignal): EarlyCall {
  const call = startEarlyCall(keyId, (signal) => runAttempt(env, req, cand, stream, signal), {
    clientSignal,
    // A stream that already produced its first event holds its own upstream request open.
    release: (r) => {
      if (r.ok && r.kind === "stream") {
        r.abort.abort();
        void r.iterator.return?.();
      }
    },
  });
  return { ...call, cand };
}

/** The request's ranked plan of candidates. */
export const planFor = (env: Env, headers: Headers, candidates: Candidate[], needs: RequestNeeds): Candidate[] =>
  orderCandidates(candidates, needs, {
    noFallback: (headers.get("x-no-fallback") ?? "").trim().toLowerCase() === "true",
    explorationRate: explorationRate(env),
    pinnedProbeRate: pinnedProbeRate(env),
    stats: (c) => candidateStats(c, needs.callerContinent),
  });

/** What ran while admission is asked: the cache read, then (no hit) the plan and its first attempt. */
export interface BeforeAdmission {
  key: string | null;
  hit: CachedAnswer | null;
  plan: Candidate[] | null;
  call: EarlyCall | null;
}

/**
 * Runs while admission is asked: the response cache read (a hit is served only once admitted),
 * else the plan and, when `earlyAllowed`, its first attempt.
 */
export async function startBeforeAdmission(
  input: { env: Env; headers: Headers; signal?: AbortSignal },
  auth: KeyContext,
  req: ChatRequest,
  selection: Extract<Selection, { ok: true }>,
  stream: boolean,
): Promise<BeforeAdmission> {
  const { env, headers } = input;
  let key: string | null = null;
  if (isCacheable(auth, req, headers)) {
    key = await cacheKey(auth, req);
    const hit = await readCache(env, key);
    if (hit && (hit.kind === "stream") === stream) return { key, hit, plan: null, call: null };
  }
  const plan = planFor(env, headers, selection.candidates, selection.needs);
  const first = plan[0];
  if (!first || !earlyAllowed(auth.key.id, auth.organization.id, first.credential.source === "credits")) return { key, hit: null, plan, call: null };
  return { key, hit: null, plan, call: startEarly(env, req, first, stream, auth.key.id, input.signal) };
}
