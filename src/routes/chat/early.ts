/**
 * Early upstream calls (docs/admission.md, "The first byte does not wait for the objects"): the
 * first attempt of a request starts while its admission is still being asked, so the budget
 * objects' round trip hides behind the provider's time to first token. Nothing of it reaches the
 * client before admission answered: the pipeline (execute.ts) awaits the admission before it uses
 * the attempt's result. A refused admission (or a newer key version, a refused credit reservation
 * for a credit-paid candidate) cancels the call: its upstream request is aborted, it is recorded in
 * the request's log row (`routing[].error_type = "early_cancelled"`, cost 0: not billed to the key)
 * and counted in this isolate (the operator's exposure).
 *
 * The exposure is bounded per isolate and key: at most one early call of a key is in doubt (started,
 * admission not answered yet) at a time, and after a refusal of the key (or of its organization's
 * credits) no early call starts for it until one of its requests is admitted again. So a key that
 * is disabled, rolled, deleted or at its limit costs at most one cancelled early call per isolate
 * per state change.
 */
import type { Env } from "../../env";
import type { KeyContext } from "../../auth/key-context";
import type { ChatRequest } from "../../providers/types";
import type { Candidate, RequestNeeds, Selection } from "../../routing/candidates";
import { orderCandidates } from "../../routing/order";
import { explorationRate, pinnedProbeRate } from "../../routing/score";
import { routeStats } from "../../routing/live-metrics";
import { cacheKey, isCacheable, readCache, type CachedAnswer } from "../../cache/response-cache";
import { countCancelledEarly } from "../../lib/debug-world";
import { runAttempt, type AttemptResult } from "./attempt";

const MAX_ENTRIES = 10_000;
/** Keys (`key:<id>`) and organizations (`org:<id>`) whose last admission answer was a refusal. */
const refused = new Set<string>();
/** Keys with an early call in doubt. */
const inDoubt = new Set<string>();
let cancelledTotal = 0;

const keyName = (keyId: string) => `key:${keyId}`;
const orgName = (orgId: string) => `org:${orgId}`;

/** Whether a request of this key may start its first attempt before admission answered. */
export function earlyAllowed(keyId: string, orgId: string, creditPaid: boolean): boolean {
  return !inDoubt.has(keyName(keyId)) && !refused.has(keyName(keyId)) && !(creditPaid && refused.has(orgName(orgId)));
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

export interface EarlyCall {
  cand: Candidate;
  startedAt: number;
  /** The attempt's result; use it only once admission admitted the request. */
  result: Promise<AttemptResult>;
  /** Admission answered (admitted or not): the key's slot is free again. */
  settle(): void;
  /** Admission refused (or the call no longer fits the request): aborts it, counts it. */
  cancel(): void;
}

/**
 * Starts `cand`'s attempt now. `clientSignal` (the client went away) aborts it like any attempt;
 * the caller tells a client abort from a cancel by that signal.
 */
export function startEarly(env: Env, req: ChatRequest, cand: Candidate, stream: boolean, keyId: string, clientSignal?: AbortSignal): EarlyCall {
  const name = keyName(keyId);
  inDoubt.add(name);
  const ctl = new AbortController();
  if (clientSignal?.aborted) ctl.abort();
  else clientSignal?.addEventListener("abort", () => ctl.abort(), { once: true });
  const result = runAttempt(env, req, cand, stream, ctl.signal);
  let settled = false;
  let cancelled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    inDoubt.delete(name);
  };
  return {
    cand,
    startedAt: Date.now(),
    result,
    settle,
    cancel() {
      settle();
      if (cancelled) return;
      cancelled = true;
      cancelledTotal++;
      countCancelledEarly();
      ctl.abort();
      // A stream that already produced its first event holds its own upstream request open.
      result
        .then((r) => {
          if (r.ok && r.kind === "stream") {
            r.abort.abort();
            void r.iterator.return?.();
          }
        })
        .catch(() => undefined);
    },
  };
}

/** The request's ranked plan of candidates. */
export const planFor = (env: Env, headers: Headers, candidates: Candidate[], needs: RequestNeeds): Candidate[] =>
  orderCandidates(candidates, needs, {
    noFallback: (headers.get("x-no-fallback") ?? "").trim().toLowerCase() === "true",
    explorationRate: explorationRate(env),
    pinnedProbeRate: pinnedProbeRate(env),
    stats: (c) => routeStats(c.providerId, c.modelId),
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
