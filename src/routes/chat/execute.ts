/**
 * `POST /v1/chat/completions` end to end, shared by the HTTP route, the front doors (`/v1/messages`,
 * `/v1/responses`, which translate at their edge) and the MCP `chat` tool:
 *
 *   validate -> model id -> candidates (capabilities, compliance, credentials, IAM)
 *   -> admission with the early call (admit.ts: the key's and, for credit-paid candidates, the
 *      organization's budget objects, asked at the same time while the response cache is read and
 *      the first attempt starts; nothing released before admission answered, cancelled if it refuses)
 *   -> the cached answer, or ranked attempts with failover -> OpenAI JSON or SSE (serve.ts).
 *
 * Everything after the answer (request log, settlement, live metrics, cache write) runs in
 * waitUntil. A client that goes away (request signal) aborts the upstream and is settled like any
 * other outcome (run.ts).
 */
import { checkKey } from "../../auth/gateway-key";
import { ApiError } from "../../errors/api-error";
import type { RoutingAttempt } from "../../db/schema";
import type { ChatRequest } from "../../providers/types";
import { noteUpstreamMs } from "../middleware/overhead";
import { parseChatRequest } from "./schema";
import type { ResolvedModel } from "../../routing/parse-model-id";
import type { Candidate } from "../../routing/candidates";
import { resolveFallbacks, selectWithFallbacks } from "../../routing/fallback-models";
import { isDecisiveAttempt } from "../../routing/order";
import { withAnotherKey } from "../../routing/key-choice";
import { withOperatorKey } from "../../routing/operator-fallback";
import { admitCredits } from "../../billing/credits";
import { estimateUpperBound } from "../../billing/estimate";
import { maybeRefreshMetrics, reportAttempts } from "../../routing/live-metrics";
import type { AttemptSample } from "../../routing/metrics";
import { attemptStatus, finalError, type AttemptFailure } from "../../routing/failover";
import { runHedged, startAttempt, type HedgeInput } from "./hedge";
import { requestTimeouts } from "../../routing/timeouts";
import { boundTarget, recordSample, requestedModelOf, requestedProviderOf, resolve, responseModelOf } from "./model-facts";
import { admitChat } from "./admit";
import { attemptRecord, clientGone, newRun, recordRejection, type ChatExecutionInput, type Run } from "./run";
import { serveCached, serveJson, serveStream, type Served } from "./serve";

export type { ChatExecutionInput } from "./run";

export async function executeChatCompletion(input: ChatExecutionInput): Promise<Response> {
  const run = newRun(input, requestedModelOf(input.body));

  input.probe?.mark("exec");
  try {
    return await execute(run);
  } catch (err) {
    // An early call the pipeline did not take is cancelled and logged with the refusal.
    run.dropEarly?.();
    if (err instanceof ApiError) {
      if (!run.logged) recordRejection(run, err, run.cancelledEarly ? [run.cancelledEarly] : []);
    } else if (!run.logged) {
      // A bug: still log the request (as the generic 500 onError renders) and release the reservation.
      recordRejection(run, new ApiError(500, "Internal server error", { type: "api_error", code: "internal_error" }), run.cancelledEarly ? [run.cancelledEarly] : []);
    }
    throw err;
  }
}

/**
 * Body and model checks that come before admission. A request they refuse still asks the key's
 * state first, so a dead key or one at its limit answers 401 whatever its body (the key's state
 * answers first); valid requests pay nothing extra. When that answer brings a newer context (a
 * custom provider or model created a moment ago), the request is judged again on it:
 * the isolate's cached context may prove a model known, never refuse one.
 */
async function parseOrGate(run: Run): Promise<Parsed> {
  try {
    return parseOnce(run);
  } catch (err) {
    if (!(err instanceof ApiError && err.status < 500)) throw err;
    const cached = run.auth;
    run.auth = await checkKey(run.input.env, cached, { spending: true });
    if (run.auth === cached) throw err;
    return parseOnce(run);
  }
}

/** The validated request, its model and its fallback models (`models`) as this key resolves them. */
interface Parsed { req: ChatRequest; resolved: ResolvedModel; fallbacks: ResolvedModel[] }

function parseOnce(run: Run): Parsed {
  const req = parseChatRequest(run.input.body);
  run.requestedModel = req.model;
  const resolved = resolve(run.auth, req);
  run.requestedProvider = requestedProviderOf(resolved);
  run.canonicalModel = responseModelOf(resolved);
  return { req, resolved, fallbacks: resolveFallbacks(run.auth, req, resolved) };
}

async function execute(run: Run): Promise<Response> {
  const { env, waitUntil } = run.input;
  const parsed = await parseOrGate(run);
  const req = parsed.req;
  const selection = selectWithFallbacks(env, run.auth, parsed.resolved, parsed.fallbacks, req, run.input.clientIp, run.input.callerContinent);
  maybeRefreshMetrics(env, waitUntil, run.input.callerContinent ?? null);
  const stream = req.stream === true;
  // Before admission: a bad timeout header is a 400 with nothing reserved.
  const timeouts = requestTimeouts(env, run.input.headers, run.auth.project, req, selection.ok ? selection.needs : { promptTokens: 0, maxTokens: undefined });

  const routing: RoutingAttempt[] = [];
  const admitted = await admitChat(run, req, parsed.resolved, selection, stream, routing, timeouts);
  const responseModel = run.input.echoRequestedModel ? run.requestedModel : responseModelOf(admitted.resolved);
  // Response cache: served only now, after auth, limits and access rules.
  if (admitted.hit) return serveCached(run, admitted.hit, responseModel);
  const { plan, cacheKey: key } = admitted;

  const samples: AttemptSample[] = [];
  let last: { failure: AttemptFailure; cand: Candidate } | null = null;
  const signal = run.input.signal;
  // A non-retryable 4xx is the request's own fault when the provider it was meant for says so:
  // the pinned provider, or the first choice of a canonical request. A fallback's own 4xx (a
  // provider that lists the model but refuses it) only rules that fallback out. With fallback
  // models (`models`) it ends that model's attempts, and the next model is tried.
  let doneModel = -1;
  const triedKeys = new Set<string>();
  // Each planned candidate, and with hedging (hedge.ts) the next one when it is late; `tried`
  // skips a candidate a hedge already ran. The plan may grow while it runs (another key of a
  // provider whose key failed goes right after it).
  const hedge: HedgeInput = { env, req, stream, signal, timeouts, promptTokens: admitted.needs.promptTokens, probe: run.input.probe };
  const tried = new Set<Candidate>();
  for (const planned of plan) {
    if (tried.has(planned) || planned.modelRank <= doneModel) continue;
    const earlyCall = admitted.takeEarly(planned);
    if (!earlyCall && signal?.aborted) return clientGone(run, planned, req, routing, stream, false);
    const next = plan.slice(plan.indexOf(planned) + 1).find((c) => !tried.has(c) && c.modelRank === planned.modelRank);
    for (const { cand, result, spanMs, loser } of await runHedged(hedge, earlyCall ?? startAttempt(hedge, planned), next)) {
      tried.add(cand);
      if (loser) {
        routing.push({ ...attemptRecord(run, cand, 499, false, loser.latencyMs, result.apiKeyHash, "hedge_cancelled"), hedge_cost: Number(loser.costPico) / 1e12 });
        continue;
      }
      run.upstreamMs += spanMs;
      if (!result.ok && signal?.aborted) {
        routing.push(attemptRecord(run, cand, 499, false, result.upstreamMs, result.apiKeyHash, "client_aborted"));
        return clientGone(run, cand, req, routing, stream, true);
      }
      if (!result.ok) {
        routing.push(attemptRecord(run, cand, attemptStatus(result.failure), false, result.upstreamMs, result.apiKeyHash, result.failure.errorType));
        recordSample(samples, cand, result.failure.providerFault ? "error" : "client_error", null, 0, null);
        last = { failure: result.failure, cand };
        // A key that is refused, rate limited or failing: another key of the same provider first.
        const sameProvider = withAnotherKey(cand, result.failure.status, triedKeys);
        if (sameProvider) {
          plan.splice(plan.indexOf(cand) + 1, 0, sameProvider);
          continue;
        }
        // Every own key failed: a hybrid project that allows it tries the operator's key next.
        const operator = withOperatorKey(env, run.auth.project, cand, result.failure.status);
        if (operator && (await reserveCredits(run, req, operator))) {
          plan.splice(plan.indexOf(cand) + 1, 0, operator);
          continue;
        }
        if (!result.failure.retryable && isDecisiveAttempt(plan, cand)) doneModel = cand.modelRank;
        continue;
      }
      routing.push(attemptRecord(run, cand, 200, true, result.upstreamMs, result.apiKeyHash));
      // A fallback model answers under its own id.
      const ctx: Served = { run, req, cand, routing, samples, responseModel: cand.modelRank > 0 ? cand.modelId : responseModel, cacheKey: key, needs: admitted.needs };
      if (result.kind === "json") return serveJson(ctx, result.parsed, result.upstreamMs);
      return serveStream(ctx, result);
    }
  }

  reportAttempts(env, waitUntil, samples, run.input.callerContinent ?? null);
  const failure = last ?? { failure: { kind: "network" as const, status: 0, message: "no provider could be tried", errorType: "no_provider", retryable: false, providerFault: false }, cand: plan[0]! };
  const error = finalError(failure.failure, routing.length, failure.cand.providerId);
  recordRejection(run, error, routing, stream);
  noteUpstreamMs(error, run.upstreamMs);
  throw error;
}

/**
 * A credit reservation for a candidate on the operator's key that admission did not plan for (the
 * hybrid fallback, src/routing/operator-fallback.ts): the one the request holds, else one asked now.
 * False when the organization's credits refuse it (then the fallback is not tried).
 */
async function reserveCredits(run: Run, req: ChatRequest, cand: Candidate): Promise<boolean> {
  if (run.creditsReservationId) return true;
  const c = await admitCredits(run.input.env, run.auth.organization.id, estimateUpperBound(req, [boundTarget(req, cand)]));
  if (c.ok) run.creditsReservationId = c.reservationId;
  return c.ok;
}
